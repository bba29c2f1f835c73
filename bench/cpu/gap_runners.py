"""The in-process runners of gap.py: llama-bench's decode loop on our loaded context, with and
without our sampler chain, and the chain alone."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from gptoss_local.backends.base import GenerationSettings
from gptoss_local.backends.llamacpp import native
from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
from gptoss_local.backends.llamacpp.load import _context_params
from gptoss_local.backends.llamacpp.options import LlamaOptions
from gptoss_local.backends.llamacpp.sampling import Sampler
from gptoss_local.benchmark import END_TOKENS, SAMPLING
from gptoss_local.harmony import render_prompt


class Bare:
    """llama-bench's tg loop (one token a `llama_decode`, llama.cpp's own batch of one) on the
    backend's context, after `conversation`'s prompt; optionally sampling with our chain."""

    def __init__(self, backend: LlamaCppBackend, conversation: Any, context: Any = None) -> None:
        self.backend = backend
        self._context = context  # another context on the same model, else the backend's
        messages = list(conversation.messages)
        text = render_prompt(messages, current_date=conversation.current_date)
        self.prompt = backend.tokenize(text)
        self._ban = tuple((backend.tokenize(t)[0], float("-inf")) for t in END_TOKENS)

    def free(self) -> None:
        """Release the other context, if one was given."""
        if self._context is not None:
            native.lib().llama_free(self._context)
            self._context = None

    def chain(self, mode: str) -> Sampler:
        """The chain ours builds for `mode` (end tokens banned, as `run_once` does)."""
        settings = GenerationSettings(seed=1, **SAMPLING[mode])  # type: ignore[arg-type]
        return Sampler(self.backend._native.vocab, settings, LlamaOptions(logit_bias=self._ban))

    def run(self, tokens: int, mode: str | None, native_draw: bool = False) -> tuple[float, float]:
        """Tokens/s of `tokens` one-token decodes after the prompt, by the clock and by this
        process's CPU time (`mode` None: no sampling, the tokens fed are the prompt's, cycled,
        as llama-bench feeds arbitrary ones; `native_draw`: llama.cpp's `llama_sampler_sample`
        through the chain, not our quick draw)."""
        b = native.lib()
        context = self._context or self.backend._native.context
        self.backend.cache.clear()
        b.llama_memory_clear(b.llama_get_memory(context), True)
        sampler = self.chain(mode) if mode else None
        if sampler is not None and native_draw:
            sampler._quick = None
        try:
            self._prompt(b, context)
            one = (b.llama_token * 1)(self.prompt[-1])
            batch = b.llama_batch_get_one(one, 1)
            token = sampler.sample(context) if sampler else self.prompt[-1]
            start, cpu = time.perf_counter(), time.process_time()
            for step in range(tokens):
                one[0] = token
                if b.llama_decode(context, batch) != 0:
                    raise RuntimeError("llama_decode failed")
                token = sampler.sample(context) if sampler else self.prompt[step % len(self.prompt)]
            b.llama_synchronize(context)
            wall, cpu = time.perf_counter() - start, time.process_time() - cpu
            return tokens / wall, tokens / max(cpu, 1e-9)
        finally:
            if sampler is not None:
                sampler.free()
            self.backend.cache.clear()

    def _prompt(self, b: Any, context: Any) -> None:
        array = (b.llama_token * len(self.prompt))(*self.prompt)
        if b.llama_decode(context, b.llama_batch_get_one(array, len(self.prompt))) != 0:
            raise RuntimeError("prompt decode failed")


def sized_context(backend: LlamaCppBackend, cells: int) -> Any:
    """A context of `cells` cells on the backend's model, as its loader makes one otherwise
    (llama-bench sizes its context so: depth + generated tokens)."""
    settings = replace(backend.settings, context=cells)
    return native.lib().llama_init_from_model(
        backend._native.model, _context_params(settings, backend._native.threads)
    )


def sampler_microseconds(bare: Bare, mode: str, native_draw: bool = False) -> float:
    """µs of one draw of our sampler on one decode's logits (the median of 7 batches of 200
    calls; no decode); `native_draw`: llama.cpp's `llama_sampler_sample` through the chain,
    not our quick draw."""
    backend = bare.backend
    b, context = native.lib(), backend._native.context
    backend.cache.clear()
    bare._prompt(b, context)
    sampler = bare.chain(mode)
    if native_draw:
        sampler._quick = None
    try:
        batches = []
        for _ in range(7):
            start = time.perf_counter()
            for _ in range(200):
                sampler.sample(context)
            batches.append((time.perf_counter() - start) * 1e6 / 200)
        return sorted(batches)[3]
    finally:
        sampler.free()
        backend.cache.clear()
