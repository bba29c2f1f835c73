"""What only the llama.cpp engine understands, apart from the settings every backend shares."""

from __future__ import annotations

from dataclasses import dataclass

DRAFTERS = ("", "ngram", "eagle3")


@dataclass(frozen=True)
class LlamaOptions:
    """llama.cpp-only options of a reply.

    Attributes:
        grammar: GBNF constraining the raw output from its first token (tests steer the tiny
            random model with it); held beside the grammar of a response format or tool choice
            (`backends/llamacpp/structured`), never instead of it.
        logit_bias: (token id, bias) pairs; -inf bans a token. Added to the request's own
            `GenerationSettings.logit_bias`.
        backend_sampling: Sample inside llama.cpp's compute graph (on the GPU) instead of
            after it, saving a round trip per token; llama.cpp calls this experimental and it
            falls back to the CPU when refused. A reply with drafts samples on the CPU (the
            graph samples one row of a sequence per decode) until drafting gives up for it.
        draft: Speculative decoding: "ngram" drafts from the context's own earlier tokens
            (`drafting.NgramDrafter`), "eagle3" with the EAGLE-3 head loaded beside the model
            (`LoadSettings.draft_model`), checked by the model in one decode; "" none. Not
            taken by `serve`'s replies decoded together.
    """

    grammar: str | None = None
    logit_bias: tuple[tuple[int, float], ...] = ()
    backend_sampling: bool = False
    draft: str = ""

    def __post_init__(self) -> None:
        if self.draft not in DRAFTERS:
            raise ValueError(f"draft must be one of {', '.join(map(repr, DRAFTERS))}")
