"""Prefill and decode measurements of the llama.cpp backend, for `gptoss-local bench` and the
GPU benchmark scripts. Each figure is taken with the cache cleared and end tokens banned, so a
run always evaluates and generates exactly what was asked. Over the machine's engine (a client
of our `serve`) a run asks with a cache key of its own instead, which no cached prompt has, and
the figures are the ones the engine measured (`backends.openai.reading`)."""

from __future__ import annotations

import datetime as dt
import secrets
from dataclasses import dataclass, replace

from gptoss_local.backends.base import Backend, GenerationSettings, ReplyRequest, Stats
from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
from gptoss_local.backends.llamacpp.options import LlamaOptions
from gptoss_local.conversation import Conversation, Message
from gptoss_local.harmony import render_prompt

FILLER = " The quick brown fox jumps over the lazy dog near the river bank."
SAMPLING = {
    "greedy": {"temperature": 0.0},
    "default": {"temperature": 1.0, "top_p": 1.0},  # gpt-oss's recommended settings
}
END_TOKENS = ("<|return|>", "<|call|>", "<|endoftext|>")
NEVER = -100.0  # the API's logit bias that bans a token


@dataclass(frozen=True)
class Measurement:
    """One run: what was evaluated and generated, and how fast."""

    name: str
    prompt_tokens: int
    generated_tokens: int
    prefill_tokens_per_second: float
    decode_tokens_per_second: float
    ttft_seconds: float


def filler_conversation(backend: Backend, tokens: int) -> Conversation:
    """A one-message conversation whose prompt is `tokens` tokens long (at least the shortest
    possible prompt). Exact lengths matter: llama.cpp evaluates prompts in micro-batches of
    512, and a 2,113-token prompt costs a fifth more than a 2,048-token one."""

    def prompt_length(text: str) -> int:
        c = conversation(text)
        return len(backend.tokenize(render_prompt(list(c.messages), current_date=c.current_date)))

    def conversation(text: str) -> Conversation:
        return Conversation((Message("user", text),), current_date=dt.date(2026, 1, 1))

    text = "Summarise this:"
    per_chunk = max(1, len(backend.tokenize(FILLER, special=False)))
    text += FILLER * max(0, (tokens - prompt_length(text)) // per_chunk)
    while prompt_length(text) > tokens and text.endswith(FILLER):
        text = text[: -len(FILLER)]
    missing = tokens - prompt_length(text)
    if missing > 0:
        text += "\n" * missing  # a line break is one token in byte-level vocabularies
    return conversation(text)


def run_once(
    backend: Backend,
    conversation: Conversation,
    generate: int,
    sampling: str = "greedy",
    backend_sampling: bool = False,
    keep_cache: bool = False,
) -> Stats:
    """Evaluate the conversation and generate exactly `generate` tokens; returns the stats."""
    ends = [backend.tokenize(t)[0] for t in END_TOKENS]
    settings = GenerationSettings(max_tokens=generate, seed=1, **SAMPLING[sampling])  # type: ignore[arg-type]
    if not isinstance(backend, LlamaCppBackend):  # our engine's client: the API's fields
        banned = replace(settings, logit_bias=tuple((t, NEVER) for t in sorted(set(ends))))
        key = None if keep_cache else f"bench-{secrets.token_hex(8)}"
        return backend.stream(ReplyRequest(conversation, banned, cache_key=key)).drain()[1]
    if not keep_cache:
        backend.cache.clear()
    ban = tuple((token, float("-inf")) for token in ends)
    options = LlamaOptions(logit_bias=ban, backend_sampling=backend_sampling)
    return backend.stream(ReplyRequest(conversation, settings), options=options).drain()[1]


def measure(
    backend: Backend,
    name: str,
    prompt_tokens: int,
    generate: int,
    sampling: str = "greedy",
    backend_sampling: bool = False,
    repeats: int = 3,
) -> Measurement:
    """Best of `repeats` runs (after one warm-up) of a prompt of about `prompt_tokens` tokens."""
    conversation = filler_conversation(backend, prompt_tokens)
    run_once(backend, conversation, min(generate, 8), sampling, backend_sampling)
    runs = [
        run_once(backend, conversation, generate, sampling, backend_sampling)
        for _ in range(repeats)
    ]
    best = max(runs, key=lambda s: s.decode_tokens_per_second or 0.0)
    # 0 where the engine timed no prefill (one too old to send its own figures)
    prefills = [s.evaluated_tokens / s.prefill_seconds for s in runs if s.prefill_seconds]
    fastest_prefill = max(prefills, default=0.0)
    return Measurement(
        name=name,
        prompt_tokens=best.prompt_tokens,
        generated_tokens=best.generated_tokens,
        prefill_tokens_per_second=round(fastest_prefill, 1),
        decode_tokens_per_second=round(best.decode_tokens_per_second or 0.0, 1),
        ttft_seconds=round(best.ttft_seconds or 0.0, 4),
    )
