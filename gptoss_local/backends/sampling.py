"""A native llama.cpp sampler chain built from `GenerationSettings` and `LlamaOptions`, skipping
no-op stages.

Stages that change nothing still cost time over gpt-oss's 201k-token vocabulary: top-p 1.0 sorts
every candidate, so it (and top-k 0, min-p 0, temperature 1) is left out of the chain.
"""

from __future__ import annotations

from typing import Any

from gptoss_local.backends import llama_native as native
from gptoss_local.backends.base import BackendError, GenerationSettings
from gptoss_local.backends.llama_options import LlamaOptions
from gptoss_local.i18n import _


class Sampler:
    """Owns one `llama_sampler` chain; `sample()` picks and accepts the next token.

    With `options.backend_sampling` the chain is attached to the context for `sequence`, so
    llama.cpp samples as part of each decode and `sample()` only reads the token back.
    """

    def __init__(
        self,
        vocab: Any,
        settings: GenerationSettings,
        options: LlamaOptions | None = None,
        context: Any = None,
        sequence: int = 0,
    ) -> None:
        options = options or LlamaOptions()
        bindings = native.lib()
        params = bindings.llama_sampler_chain_default_params()
        params.no_perf = True
        self._chain = bindings.llama_sampler_chain_init(params)
        self.stages: list[str] = []
        try:
            for name, stage in _stages(bindings, vocab, settings, options):
                if not stage:
                    raise BackendError(
                        _("llama.cpp refused the sampler stage {name}").format(name=name)
                    )
                bindings.llama_sampler_chain_add(self._chain, stage)
                self.stages.append(name)
        except BaseException:
            self.free()
            raise
        self._sample = bindings.llama_sampler_sample
        self._attached_to = None
        self._sequence = sequence
        on_backend = options.backend_sampling and context is not None
        if on_backend and bindings.llama_set_sampler(context, sequence, self._chain):
            self._attached_to = context
            self.stages.append("on-backend")

    @property
    def attached(self) -> bool:
        """Whether the chain runs inside the context's decode graph."""
        return self._attached_to is not None

    def reset(self) -> None:
        """Start a new reply: the grammar from its root, the random stream from the seed."""
        native.lib().llama_sampler_reset(self._chain)

    def sample(self, context: Any, index: int = -1) -> int:
        """The next token from the logits of the batch's token `index` (-1: the last)."""
        return int(self._sample(self._chain, context, index))

    def free(self) -> None:
        """Detach from the context and release the native chain (and its stages)."""
        if self._attached_to is not None:
            native.lib().llama_set_sampler(self._attached_to, self._sequence, None)
            self._attached_to = None
        if self._chain:
            native.lib().llama_sampler_free(self._chain)
            self._chain = None


class KeptSampler:
    """Keeps the last chain attached to the context between replies.

    Attaching or detaching a chain makes llama.cpp re-reserve its compute graph at the next
    decode (~30 ms before the first token on an H200), so a chat whose replies share their
    sampling settings reuses one attached chain, reset, instead. One per sequence.
    """

    def __init__(self, sequence: int = 0) -> None:
        self._sequence = sequence
        self._kept: tuple[tuple[object, ...], Sampler] | None = None

    def get(
        self, vocab: Any, settings: GenerationSettings, options: LlamaOptions, context: Any
    ) -> Sampler:
        """A chain for `settings` and `options`: the kept one when it matches, else a new one."""
        key = _key(settings, options)
        if self._kept is not None and self._kept[0] == key:
            sampler = self._kept[1]
            sampler.reset()
            return sampler
        self.drop()
        sampler = Sampler(vocab, settings, options, context, self._sequence)
        if sampler.attached:
            self._kept = (key, sampler)
        return sampler

    def release(self, sampler: Sampler) -> None:
        """The reply ended: free `sampler` unless it is the kept one."""
        if self._kept is None or self._kept[1] is not sampler:
            sampler.free()

    def drop(self) -> None:
        """Detach and free the kept chain (before the context goes, or other settings)."""
        if self._kept is not None:
            self._kept[1].free()
            self._kept = None


def _key(s: GenerationSettings, o: LlamaOptions) -> tuple[object, ...]:
    """What decides a chain's stages (effort and token limits do not)."""
    return (s.temperature, s.top_k, s.top_p, s.min_p, s.seed, o)


def _stages(
    bindings: Any, vocab: Any, s: GenerationSettings, o: LlamaOptions
) -> list[tuple[str, Any]]:
    stages: list[tuple[str, Any]] = []
    if o.logit_bias:
        biases = (bindings.llama_logit_bias * len(o.logit_bias))(*o.logit_bias)
        n_vocab = bindings.llama_vocab_n_tokens(vocab)
        stages.append(
            ("logit_bias", bindings.llama_sampler_init_logit_bias(n_vocab, len(biases), biases))
        )
    if o.grammar:
        stages.append(
            ("grammar", bindings.llama_sampler_init_grammar(vocab, o.grammar.encode(), b"root"))
        )
    if s.temperature <= 0:
        return [*stages, ("greedy", bindings.llama_sampler_init_greedy())]
    if s.top_k > 0:
        stages.append(("top_k", bindings.llama_sampler_init_top_k(s.top_k)))
    if s.top_p < 1.0:
        stages.append(("top_p", bindings.llama_sampler_init_top_p(s.top_p, 1)))
    if s.min_p > 0.0:
        stages.append(("min_p", bindings.llama_sampler_init_min_p(s.min_p, 1)))
    if s.temperature != 1.0:
        stages.append(("temp", bindings.llama_sampler_init_temp(s.temperature)))
    seed = bindings.LLAMA_DEFAULT_SEED if s.seed is None else s.seed & 0xFFFFFFFF
    stages.append(("dist", bindings.llama_sampler_init_dist(seed)))
    return stages
