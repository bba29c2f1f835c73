"""A native llama.cpp sampler chain built from `GenerationSettings` and `LlamaOptions`, skipping
no-op stages; and the grammars a reply is held to.

Stages that change nothing still cost time over gpt-oss's 201k-token vocabulary: top-p 1.0 sorts
every candidate, so it (and top-k 0, min-p 0, temperature 1) is left out of the chain. The
chain is: logit biases (the request's, `LlamaOptions`', and the end tokens a structured reply
may not end with, merged), OpenAI's frequency and presence penalties, then greedy or top-k /
top-p / min-p / temperature / dist. A reply whose final message is held to a format also bars
`<|return|>` until that message starts (an "until_final" bias, first in the chain and taken out
of it then), so gpt-oss cannot end its reply with reasoning and no answer. Grammars
(`LlamaOptions.grammar`, a structured reply's) are not a stage: `structured.gate.GrammarGate`
checks the token the chain samples against them, and samples again under them only when it
does not fit. A plain chain on the CPU (biases, a temperature, greedy or dist) draws the same
token in numpy instead (`quick_draw`), several times faster on gpt-oss's vocabulary.
"""

from __future__ import annotations

from typing import Any

from gptoss_local.backends.base import BackendError, GenerationSettings
from gptoss_local.backends.llamacpp import native
from gptoss_local.backends.llamacpp.options import LlamaOptions
from gptoss_local.backends.llamacpp.quick_draw import QuickDraw, can_draw
from gptoss_local.backends.llamacpp.structured import token_trie
from gptoss_local.backends.llamacpp.structured.gate import Constraint, FinalHeaderWatch, GrammarGate
from gptoss_local.backends.llamacpp.structured.race import Race, raceable
from gptoss_local.i18n import _

# Penalties count a token over this many of the reply's last tokens when the context's size is
# not known; with a context, over all of it, as OpenAI counts "the text so far".
PENALTY_TOKENS = 4096


class Sampler:
    """Owns one `llama_sampler` chain (and the reply's grammars); `sample()` picks and accepts
    the next token.

    With `options.backend_sampling` the chain is attached to the context for `sequence`, so
    llama.cpp samples as part of each decode and `sample()` only reads the token back. A grammar
    samples on the CPU (llama.cpp has none on the GPU): a reply held from its first token never
    attaches; one held from its final message on samples its reasoning in the graph and leaves
    it when the grammar starts (a copy of the chain, with its counts and random stream, goes
    on on the CPU; llama.cpp re-reserves its graph once, ~30 ms).
    """

    def __init__(
        self,
        vocab: Any,
        settings: GenerationSettings,
        options: LlamaOptions | None = None,
        context: Any = None,
        sequence: int = 0,
        constraint: Constraint | None = None,
        pieces: native.PieceCache | None = None,
    ) -> None:
        options = options or LlamaOptions()
        bindings = native.lib()
        params = bindings.llama_sampler_chain_default_params()
        params.no_perf = True
        self._chain = bindings.llama_sampler_chain_init(params)
        self._gate: GrammarGate | None = None
        self._attached_to = None
        self._sequence = sequence
        self.stages: list[str] = []
        try:
            window = int(bindings.llama_n_ctx(context)) if context is not None else PENALTY_TOKENS
            biases = _biases(bindings, vocab, settings, options, constraint)
            until_final = constraint.until_final if constraint is not None else ()
            stages = _stages(bindings, vocab, settings, biases, window)
            if until_final:
                stages.insert(0, ("until_final", _bias_stage(bindings, vocab, until_final)))
            for name, stage in stages:
                if not stage:
                    raise BackendError(
                        _("llama.cpp refused the sampler stage {name}").format(name=name)
                    )
                bindings.llama_sampler_chain_add(self._chain, stage)
                self.stages.append(name)
            counting = "penalties" in self.stages  # the only stage that keeps what it is given
            race = None
            if raceable(self.stages):
                n_vocab = int(bindings.llama_vocab_n_tokens(vocab))
                race = Race(bindings, n_vocab, self.stages[-1] == "greedy", settings.seed)
            self._gate = _gate(vocab, options, constraint, pieces, biases, counting, race)
            if self._gate is not None and pieces is not None:
                token_trie.prepare(pieces, int(bindings.llama_vocab_n_tokens(vocab)))
        except BaseException:
            self.free()
            raise
        if self._gate is not None:
            self.stages.append("grammar")
        self._sample = bindings.llama_sampler_sample
        free_first = self._gate is None or not self._gate.holding
        self._may_attach = options.backend_sampling and context is not None
        # Drafts are checked by a chain on the CPU (llama.cpp samples one row of a sequence per
        # decode in its graph); it may move there when drafting gives up (`enter_graph`).
        on_backend = self._may_attach and free_first and not options.draft
        if on_backend and bindings.llama_set_sampler(context, sequence, self._chain):
            self._attached_to = context
            self.stages.append("on-backend")
        # A plain chain that stays on the CPU draws in numpy (`quick_draw`): the same tokens.
        self._quick: QuickDraw | None = None
        if self._gate is None and not self._may_attach and can_draw(self.stages):
            n_vocab = int(bindings.llama_vocab_n_tokens(vocab))
            greedy = self.stages[-1] == "greedy"
            self._quick = QuickDraw(
                bindings, self._chain, n_vocab, biases, settings.temperature, greedy
            )
            self.stages.append("quick draw")

    @property
    def attached(self) -> bool:
        """Whether the chain runs inside the context's decode graph."""
        return self._attached_to is not None

    def reset(self) -> None:
        """Start a new reply: grammars from their root, the random stream from the seed.
        (Never called on a chain whose "until_final" stage is over: such chains are not kept.)"""
        native.lib().llama_sampler_reset(self._chain)
        if self._gate is not None:
            self._gate.reset()
        if self._quick is not None:
            self._quick.reset()

    def sample(self, context: Any, index: int = -1) -> int:
        """The next token from the logits of the batch's token `index` (-1: the last)."""
        if self._quick is not None:
            return self._quick.draw(context, index)
        if self._gate is None:
            return int(self._sample(self._chain, context, index))
        token = self._gate.sample(self._chain, context, index)
        if self._attached_to is not None and self._gate.holding:
            self._leave_graph()  # before the next decode, whose logits the grammar needs
        if self._gate.final_on and self.stages[0] == "until_final":
            native.lib().llama_sampler_free(native.lib().llama_sampler_chain_remove(self._chain, 0))
            self.stages[0] = "until_final (over)"
        return token

    def enter_graph(self, context: Any) -> bool:
        """Sample in `context`'s graph from its next decode on (a chain made for the CPU that
        may go there: `options.backend_sampling` said so, and it has no grammar); whether it
        did. llama.cpp re-reserves its graph once (~30 ms on an H200)."""
        if self._attached_to is not None or not self._may_attach or self._gate is not None:
            return False
        if not native.lib().llama_set_sampler(context, self._sequence, self._chain):
            return False
        self._attached_to = context
        self.stages.append("on-backend (after drafts)")
        return True

    @property
    def keepable(self) -> bool:
        """Whether `KeptSampler` may keep it: attached, and with no grammar to leave it for."""
        return self._attached_to is not None and self._gate is None

    def _leave_graph(self) -> None:
        """Go on sampling on the CPU with a copy of the chain (a chain llama.cpp set up for its
        graph skips its graph stages on the CPU, so it cannot be used there itself)."""
        bindings = native.lib()
        copy = bindings.llama_sampler_clone(self._chain)
        if not copy:
            raise BackendError(_("llama.cpp could not copy the sampler chain"))
        bindings.llama_set_sampler(self._attached_to, self._sequence, None)
        bindings.llama_sampler_free(self._chain)
        self._chain, self._attached_to = copy, None
        self.stages.append("left the graph")

    def free(self) -> None:
        """Detach from the context and release the native chain (and its stages)."""
        if self._attached_to is not None:
            native.lib().llama_set_sampler(self._attached_to, self._sequence, None)
            self._attached_to = None
        if self._gate is not None:
            self._gate.free()
            self._gate = None
        if self._chain:
            native.lib().llama_sampler_free(self._chain)
            self._chain = None


class KeptSampler:
    """Keeps the last chain attached to the context between replies.

    Attaching or detaching a chain makes llama.cpp re-reserve its compute graph at the next
    decode (~30 ms before the first token on an H200), so a chat whose replies share their
    sampling settings reuses one attached chain, reset, instead. One per sequence. A chain that
    is not attached (CPU sampling) or has a grammar is never kept; the kept one is detached
    before another runs, or llama.cpp would go on sampling for the sequence in its graph.
    """

    def __init__(self, sequence: int = 0) -> None:
        self._sequence = sequence
        self._kept: tuple[tuple[object, ...], Sampler] | None = None

    def get(
        self,
        vocab: Any,
        settings: GenerationSettings,
        options: LlamaOptions,
        context: Any,
        constraint: Constraint | None = None,
        pieces: native.PieceCache | None = None,
    ) -> Sampler:
        """A chain for `settings`, `options` and `constraint`: the kept one when it matches,
        else a new one."""
        key = _key(settings, options, constraint)
        if self._kept is not None and self._kept[0] == key:
            sampler = self._kept[1]
            sampler.reset()
            return sampler
        self.drop()
        sampler = Sampler(vocab, settings, options, context, self._sequence, constraint, pieces)
        if sampler.keepable:
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


def _key(s: GenerationSettings, o: LlamaOptions, c: Constraint | None) -> tuple[object, ...]:
    """Everything that decides a chain's stages and grammars (effort and token limits do not)."""
    sampling = (s.temperature, s.top_k, s.top_p, s.min_p, s.seed)
    return (*sampling, s.frequency_penalty, s.presence_penalty, s.logit_bias, o, c)


def _biases(
    bindings: Any,
    vocab: Any,
    s: GenerationSettings,
    o: LlamaOptions,
    c: Constraint | None,
) -> tuple[tuple[int, float], ...]:
    """Every bias asked, summed per token (the request's, the options', a constraint's bars)."""
    n_vocab = int(bindings.llama_vocab_n_tokens(vocab))
    summed: dict[int, float] = {}
    barred = [(token, float("-inf")) for token in (c.barred if c else ())]
    for token, bias in (*s.logit_bias, *o.logit_bias, *barred):
        if not 0 <= token < n_vocab:
            why = _("logit bias for token {token}, which the vocabulary ({size:,} tokens) lacks")
            raise BackendError(why.format(token=token, size=n_vocab), kind="unsupported")
        summed[token] = summed.get(token, 0.0) + bias
    return tuple(sorted(summed.items()))


def _gate(
    vocab: Any,
    o: LlamaOptions,
    c: Constraint | None,
    pieces: native.PieceCache | None,
    biases: tuple[tuple[int, float], ...],
    counting: bool,
    race: Race | None,
) -> GrammarGate | None:
    always = [o.grammar] if o.grammar else []
    final, watch = None, None
    if c is not None and not c.from_final:
        always.append(c.grammar)
    elif c is not None:
        if pieces is None:
            raise BackendError(_("a structured reply needs the token pieces to find its answer"))
        final, watch = c.grammar, FinalHeaderWatch(c.header, pieces)
    if not always and final is None:
        return None
    banned = tuple(t for t, bias in biases if bias == float("-inf"))
    until_final = c.until_final if c is not None else ()
    return GrammarGate(vocab, always, final, watch, banned, pieces, counting, race, until_final)


def _bias_stage(bindings: Any, vocab: Any, barred: tuple[int, ...]) -> Any:
    """A logit-bias stage that bans `barred`."""
    array = (bindings.llama_logit_bias * len(barred))(*((t, float("-inf")) for t in barred))
    n_vocab = bindings.llama_vocab_n_tokens(vocab)
    return bindings.llama_sampler_init_logit_bias(n_vocab, len(barred), array)


def _stages(
    bindings: Any,
    vocab: Any,
    s: GenerationSettings,
    biases: tuple[tuple[int, float], ...],
    window: int,
) -> list[tuple[str, Any]]:
    stages: list[tuple[str, Any]] = []
    if biases:
        array = (bindings.llama_logit_bias * len(biases))(*biases)
        n_vocab = bindings.llama_vocab_n_tokens(vocab)
        stages.append(
            ("logit_bias", bindings.llama_sampler_init_logit_bias(n_vocab, len(biases), array))
        )
    if s.frequency_penalty or s.presence_penalty:
        n_vocab = bindings.llama_vocab_n_tokens(vocab)
        penalties = bindings.llama_sampler_init_penalties(
            n_vocab, window, 1.0, s.frequency_penalty, s.presence_penalty
        )
        stages.append(("penalties", penalties))
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
