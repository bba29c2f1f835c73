"""Helpers for tests that run the real llama.cpp engine on the tiny model."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path

import llama_cpp.llama_cpp as bindings
import numpy as np

from gptoss_local.backends.base import GenerationSettings, Reply, ReplyRequest, Stats
from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
from gptoss_local.backends.llamacpp.load import LoadSettings
from gptoss_local.backends.llamacpp.options import LlamaOptions
from gptoss_local.backends.llamacpp.sampling import Sampler
from gptoss_local.conversation import Conversation, Message
from gptoss_local.events import AnswerDelta, Event, PreambleDelta, ReasoningDelta
from gptoss_local.harmony import render_prompt

DATE = dt.date(2026, 12, 2)
# Steers the random tiny model into a well-formed Harmony reply. The grammar ends with the
# answer: once it is complete only end-of-generation tokens remain, and the bias below leaves
# <|return|> as the only one.
REPLY_GRAMMAR = (
    'root ::= <|channel|> "analysis" <|message|> "The user says hi" <|end|> '
    '<|start|> "assistant" <|channel|> "final" <|message|> "Hello there"'
)


def open_tiny(path: Path, log: Path | None = None, **load: object) -> LlamaCppBackend:
    """The tiny model on the CPU with a small context."""
    settings = LoadSettings(**{"context": 2048, "gpu_layers": 0, **load})  # type: ignore[arg-type]
    return LlamaCppBackend(path, settings, log_path=log)


SEEDED = GenerationSettings(seed=1)


def steered(backend: LlamaCppBackend, **extra: object) -> LlamaOptions:
    """Options that make the tiny model answer 'Hello there' after 'The user says hi'."""
    ban = tuple((backend.tokenize(t)[0], float("-inf")) for t in ("<|call|>", "<|endoftext|>"))
    return LlamaOptions(grammar=REPLY_GRAMMAR, logit_bias=ban, **extra)  # type: ignore[arg-type]


def never_stop(backend: LlamaCppBackend) -> tuple[tuple[int, float], ...]:
    """A logit bias that bans every end-of-generation token: the reply runs to its limit."""
    stops = ("<|return|>", "<|call|>", "<|endoftext|>")
    return tuple((backend.tokenize(t)[0], float("-inf")) for t in stops)


def chat(*texts: str, reply: tuple[str, str] | None = None) -> Conversation:
    """A conversation of user messages, with an optional (reasoning, answer) after the first."""
    messages = [Message("user", texts[0])]
    if reply:
        messages.append(Message("assistant", reply[1], reasoning=reply[0]))
    messages += [Message("user", text) for text in texts[1:]]
    return Conversation(tuple(messages), current_date=DATE)


class Ran(list):  # type: ignore[type-arg]
    """A reply run to its end: its events (a list) and its `stats`."""

    stats: Stats


def ran(reply: Reply) -> Ran:
    """Every event of `reply`, with the stats it ended with (checked to be there)."""
    events, stats = reply.drain()
    done = Ran(events)
    done.stats = stats
    return done


def text_of(events: list[Event], kind: type[ReasoningDelta | AnswerDelta | PreambleDelta]) -> str:
    """The text of the events of one `kind` (ReasoningDelta, AnswerDelta, …) joined."""
    return "".join(e.text for e in events if isinstance(e, kind))


def finished(events: Ran) -> Ran:
    """The reply's events, checked to have ended with stats (read them as `.stats`)."""
    assert isinstance(events.stats, Stats)
    return events


def prompt_tokens(backend: LlamaCppBackend, conversation: Conversation) -> list[int]:
    """The tokens of the prompt the backend renders for `conversation` (default effort)."""
    c = conversation
    return backend.tokenize(render_prompt(list(c.messages), current_date=c.current_date))


def last_logits(backend: LlamaCppBackend) -> np.ndarray:
    """Logits at the last evaluated position (a one-token greedy reply leaves them in place)."""
    n_vocab = bindings.llama_vocab_n_tokens(backend._native.vocab)
    pointer = bindings.llama_get_logits_ith(backend._native.context, -1)
    return np.ctypeslib.as_array(pointer, shape=(n_vocab,)).copy()


@dataclass
class Recorded:
    """What one reply sampled, and the logits each token was sampled from."""

    tokens: list[int] = field(default_factory=list)
    logits: list[np.ndarray] = field(default_factory=list)
    stats: Stats | None = None


def recorded(
    backend: LlamaCppBackend,
    conversation: Conversation,
    settings: GenerationSettings,
    options: LlamaOptions,
    monkeypatch: object,
) -> Recorded:
    """The reply, with every sample's token and logits (read where the sampler reads them).
    `monkeypatch`: pytest's, to wrap `Sampler.sample` for this reply only."""
    size = int(bindings.llama_vocab_n_tokens(backend._native.vocab))
    done = Recorded()
    sample = Sampler.sample

    def recording(self: Sampler, context: object, index: int = -1) -> int:
        logits = bindings.llama_get_logits_ith(context, index)
        done.logits.append(np.ctypeslib.as_array(logits, shape=(size,)).copy())
        token = sample(self, context, index)
        done.tokens.append(token)
        return token

    with monkeypatch.context() as patched:  # type: ignore[attr-defined]
        patched.setattr(Sampler, "sample", recording)
        done.stats = ran(backend.stream(ReplyRequest(conversation, settings),
                                        options=options)).stats  # fmt: skip
    return done


def same_while_logits_agree(plain: Recorded, drafted: Recorded, greedy: bool) -> None:
    """Assert `drafted` is token for token `plain` for as long as the model computed the same
    logits: a batch of drafts is computed with other kernels than one token, which moves logits
    by rounding (~0.01 here), so after a near-tie two replies may part, as with llama.cpp's own
    speculative decoding. A greedy reply parts only at such a near-tie."""
    pairs = list(zip(plain.logits, drafted.logits, strict=False))
    same = next((k for k, (a, b) in enumerate(pairs) if np.abs(a - b).max() > 1e-4), len(pairs))
    assert drafted.tokens[:same] == plain.tokens[:same]  # the same logits, the same tokens
    parted = next((k for k, (a, b) in enumerate(zip(plain.tokens, drafted.tokens, strict=False))
                   if a != b), None)  # fmt: skip
    agreed = len(pairs) if parted is None else parted
    # While the tokens agree, each was sampled from the logits of its own position: the same
    # as the plain reply's but for rounding (a draft read at the wrong position is far off).
    assert all(np.abs(a - b).max() < 0.1 for a, b in pairs[:agreed])
    assert drafted.stats is not None and plain.stats is not None
    if parted is None:
        assert drafted.stats.generated_tokens == plain.stats.generated_tokens
    elif greedy:
        top = np.sort(plain.logits[parted])[-2:]
        assert top[1] - top[0] < 0.05, "a greedy reply parted where the choice was clear"
