"""Prompt evaluation and the decode loop of the llama.cpp backend."""

from __future__ import annotations

import threading
import time
from collections.abc import Generator
from typing import Any

from gptoss_local.backends import llama_native as native
from gptoss_local.backends.base import BackendError, Stats, StopReason
from gptoss_local.backends.prompt_cache import PromptCache
from gptoss_local.backends.sampling import Sampler
from gptoss_local.events import Event
from gptoss_local.harmony import HarmonyStreamParser

# Prefill runs while the user may press Enter (or quit) at any moment, and stops only between
# batches: smaller ones than a reply's keep that wait short on a CPU (Ctrl+Q during a prefill:
# 0.37 s against 1.66 s with 2,048-token batches; bench/results/quit-during-prefill-cpu.txt),
# and cost little on a GPU (pp512 is 0.95 of pp2048 on an H200).
PREFILL_CHUNK = 512
_KIND = {"reasoning": "reasoning", "answer": "answer", "preamble": "answer"}


class TokenLoop:
    """Evaluates one prompt (reusing the cached prefix) and streams one reply."""

    def __init__(
        self,
        loaded: Any,
        cache: PromptCache,
        pieces: native.PieceCache,
        stops: dict[int, StopReason],
        context_size: int,
        cancel: threading.Event | None,
    ) -> None:
        self._loaded = loaded
        self._cache = cache
        self._pieces = pieces
        self._stops = stops
        self._context_size = context_size
        self._cancel = cancel or threading.Event()
        self._bindings = native.lib()

    def run(
        self, prompt: list[int], sampler: Sampler, max_tokens: int | None, started: float
    ) -> Generator[Event, None, Stats]:
        """Yield the reply's events; return its stats."""
        cached = self._cache.prepare(prompt)
        self._evaluate(prompt[cached:])
        if self._cancel.is_set():
            return self._stats(prompt, cached, started, "cancelled", [], {}, None)
        self._cache.prompt_done()
        prefill_done = time.perf_counter()
        counts = {"reasoning": 0, "answer": 0}
        generated: list[int] = []
        parser = HarmonyStreamParser()
        reason: StopReason = "end_of_stream"
        first = last = None
        token_array = (self._bindings.llama_token * 1)()
        batch = self._bindings.llama_batch_get_one(token_array, 1)
        decode, context = self._bindings.llama_decode, self._loaded.context
        while True:
            token = sampler.sample(context)
            last = time.perf_counter()
            first = first or last
            generated.append(token)
            piece, control = self._pieces(token), self._pieces.is_control(token)
            # Told which tokens are control tokens, the parser keeps ordinary tokens that
            # spell "<|end|>" as text.
            events = parser.feed_token(piece, control=control)
            self._count(parser.content_kind, control, counts)
            yield from events
            if token in self._stops:
                reason = self._stops[token]
                break
            if self._cancel.is_set():
                reason = "cancelled"
                break
            if max_tokens is not None and len(generated) >= max_tokens:
                reason = "length"
                break
            if len(self._cache.tokens) + 1 >= self._context_size:
                reason = "context_full"
                break
            token_array[0] = token
            if decode(context, batch) != 0:
                raise BackendError(
                    "llama.cpp failed to evaluate the next token", kind="decode_failed"
                )
            self._cache.tokens.append(token)
        yield from parser.finish()
        timing = (prefill_done, first, last) if first else None
        return self._stats(prompt, cached, started, reason, generated, counts, timing)

    def prefill(self, prefix: list[int]) -> int:
        """Bring the cache to `prefix` without sampling; returns the tokens evaluated.

        The last token goes in a batch of its own, as a reply's tokens do: on a GPU the first
        reply after a load started in 0.16 s against 0.03 s later (bench/RESULTS.md), and a
        one-token decode here means to take that first-time cost out of the reply.
        """
        if self._cancel.is_set():  # before `prepare`, which would trim what newer work cached
            return 0
        cached = self._cache.prepare(prefix)
        rest = prefix[cached:]
        self._evaluate(rest[:-1], PREFILL_CHUNK)
        if not self._cancel.is_set():
            self._evaluate(rest[-1:])
        return len(self._cache.tokens) - cached

    def _evaluate(self, tokens: list[int], most: int | None = None) -> None:
        """Decode prompt tokens in batches (of `most` tokens at most, else the context's batch
        size); checks for cancellation between batches."""
        step = max(1, self._bindings.llama_n_batch(self._loaded.context))
        step = min(step, most or step)
        for start in range(0, len(tokens), step):
            if self._cancel.is_set():
                return
            chunk = tokens[start : start + step]
            array = (self._bindings.llama_token * len(chunk))(*chunk)
            status = self._bindings.llama_decode(
                self._loaded.context, self._bindings.llama_batch_get_one(array, len(chunk))
            )
            if status != 0:
                self._cache.clear()
                raise BackendError(
                    f"llama.cpp failed to evaluate the prompt (status {status})",
                    hint="The context may be full or memory short: start a new chat, or load "
                    "the model with a smaller --context.",
                    kind="decode_failed",
                )
            self._cache.tokens.extend(chunk)

    def _count(self, kind: str | None, control: bool, counts: dict[str, int]) -> None:
        """Count a content token as reasoning or answer (headers, control tokens and tool
        arguments count as neither)."""
        kind = _KIND.get(kind or "")
        if kind and not control:
            counts[kind] += 1

    def _stats(
        self,
        prompt: list[int],
        cached: int,
        started: float,
        reason: StopReason,
        generated: list[int],
        counts: dict[str, int],
        timing: tuple[float, float, float] | None,
    ) -> Stats:
        """`timing`: when the prompt was done and the first and last tokens were sampled."""
        now = time.perf_counter()
        prefill_done, first_at, last_at = timing or (now, now, now)
        decode_seconds = last_at - first_at
        rate = (len(generated) - 1) / decode_seconds if decode_seconds > 0 else None
        return Stats(
            prompt_tokens=len(prompt),
            cached_tokens=cached,
            evaluated_tokens=len(prompt) - cached,
            generated_tokens=len(generated),
            reasoning_tokens=counts.get("reasoning", 0),
            answer_tokens=counts.get("answer", 0),
            prefill_seconds=prefill_done - started,
            ttft_seconds=(first_at - started) if timing else None,
            decode_seconds=decode_seconds,
            decode_tokens_per_second=rate,
            stop_reason=reason,
            context_size=self._context_size,
            context_used=len(self._cache.tokens),
        )
