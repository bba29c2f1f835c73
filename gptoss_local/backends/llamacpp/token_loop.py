"""Prompt evaluation and the decode loop of the llama.cpp backend."""

from __future__ import annotations

import threading
from collections.abc import Generator
from dataclasses import replace
from typing import Any

from gptoss_local.backends.base import BackendError, Stats, StopReason
from gptoss_local.backends.llamacpp import native
from gptoss_local.backends.llamacpp.drafting import Drafter, DraftGovernor, DraftStats
from gptoss_local.backends.llamacpp.prompt_cache import PromptCache, prompt_failure
from gptoss_local.backends.llamacpp.reply_progress import ReplyProgress
from gptoss_local.backends.llamacpp.sampling import Sampler
from gptoss_local.backends.llamacpp.structured.gate import Constraint
from gptoss_local.events import Event
from gptoss_local.i18n import _

# Prefill runs while the user may press Enter (or quit) at any moment, and stops only between
# batches: smaller ones than a reply's keep that wait short on a CPU (Ctrl+Q during a prefill:
# 0.37 s against 1.66 s with 2,048-token batches; bench/results/quit-during-prefill-cpu.txt),
# and cost little on a GPU (pp512 is 0.95 of pp2048 on an H200).
PREFILL_CHUNK = 512
# The n-gram drafter gives up for the rest of a reply at its third pause (a head at its first).
GIVE_UP_PAUSES = 3


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
        # Speculative decoding: `drafter` drafts for the reply when `speculate` is set; one that
        # reads the target's hidden states (EAGLE-3) also follows every prompt evaluated.
        self.drafter: Drafter | None = None
        self.speculate = False
        # The chain samples on the CPU for the drafts but may sample in the graph once drafting
        # gives up for the reply (on a GPU: 13 % faster with the 20b on an H200).
        self.graph_later = False
        self.cache_key: str | None = None  # the prompt's cache key (`PromptCache.prepare`)

    def run(
        self,
        prompt: list[int],
        sampler: Sampler,
        max_tokens: int | None,
        started: float,
        turn_start: bool = False,
        constraint: Constraint | None = None,
    ) -> Generator[Event, None, Stats]:
        """Yield the reply's events; return its stats (`turn_start`: the prompt ends with the
        user's message, see `PromptCache.prompt_done`; `constraint`: the sampler's grammar,
        see `ReplyProgress`)."""
        progress = ReplyProgress(self._pieces, self._stops, max_tokens, started, constraint)
        cached = self._prepare(prompt)
        self._evaluate(prompt[cached:])
        if self._cancel.is_set():
            return self._stats(progress, prompt, cached, "cancelled")
        self._cache.prompt_done(turn_start)
        progress.prompt_evaluated()
        # llama.cpp samples in its graph one row per sequence and decode: drafts are checked
        # by a chain on the CPU (the backend hands one over when drafts are asked).
        if self.drafter is not None and self.speculate and not sampler.attached:
            ended = yield from self._speculate(self.drafter, sampler, progress)
            if isinstance(ended, int):  # drafting gave up: plain decoding, sampled in the graph
                ended = yield from self._plain(sampler, progress, ended)
            yield from progress.finish()
            stats = self._stats(progress, prompt, cached, ended)
            drafted = self.drafter.stats
            return replace(stats, draft_tokens=drafted.drafted, accepted_tokens=drafted.accepted)
        reason = yield from self._plain(sampler, progress, sampler.sample(self._loaded.context))
        yield from progress.finish()
        return self._stats(progress, prompt, cached, reason)

    def _plain(
        self, sampler: Sampler, progress: ReplyProgress, token: int
    ) -> Generator[Event, None, StopReason]:
        """Decode one token at a time from `token` (sampled, not decoded yet) to the reply's
        end; returns the stop reason."""
        token_array = (self._bindings.llama_token * 1)()
        batch = self._bindings.llama_batch_get_one(token_array, 1)
        decode, context = self._bindings.llama_decode, self._loaded.context
        while True:
            # The next token is set going before this one is parsed and handed on: on a GPU
            # llama_decode only queues the work, so the parser, the caller and a UI thread
            # holding the GIL take their time while the GPU computes, not between its steps.
            going = not (progress.ends_with(token) or self._cancel.is_set())
            going = going and len(self._cache.tokens) + 1 < self._context_size
            if going:
                token_array[0] = token
                if decode(context, batch) != 0:
                    raise BackendError(
                        _("llama.cpp failed to evaluate the next token"), kind="decode_failed"
                    )
                self._cache.tokens.append(token)
            events, reason = progress.feed(token)
            yield from events
            if reason is None and (self._cancel.is_set() or not going):
                reason = "cancelled" if self._cancel.is_set() else "context_full"
            if reason is not None:
                return reason
            token = sampler.sample(context)

    def _speculate(
        self, drafter: Drafter, sampler: Sampler, progress: ReplyProgress
    ) -> Generator[Event, None, StopReason | int]:
        """The decode loop with drafts: each decode carries the sampled token and the drafts
        that may follow it; the model's own samples at each position are taken for as long as
        they equal the drafts, so the reply is the one the plain loop writes (a sample drawn
        and compared is the rejection rule for a draft of probability one), with fewer decodes.

        Returns the stop reason; or, when drafting gives up for the reply and the chain could
        move into the graph (`graph_later`), the sampled token the plain loop goes on from.
        """
        b, context, cache = self._bindings, self._loaded.context, self._cache
        batch = b.llama_batch_init(drafter.most + 1, 0, 1)
        governor = DraftGovernor(drafter.most, drafter.break_even)
        drafter.stats = DraftStats()
        drafter.begin(cache.tokens)
        token = sampler.sample(context)
        failed = True
        try:
            while not (progress.ends_with(token) or self._cancel.is_set()):
                if len(cache.tokens) + 1 >= self._context_size:
                    break
                allowed = governor.allows()
                if (not allowed or governor.low_yield) and self._give_up(
                    governor, drafter, sampler
                ):
                    drafter.propose(token, 0)  # a head lapses
                    failed = False
                    return token
                room = min(self._context_size - len(cache.tokens) - 2, allowed)
                drafts = drafter.propose(token, room)
                drafter.stats.drafted += len(drafts)
                drafter.stats.steps += bool(drafts)
                first = len(cache.tokens)
                self._decode_with_drafts(batch, token, drafts)
                drafter.decoded([token, *drafts], first)
                cache.tokens.append(token)
                events, reason = progress.feed(token)
                yield from events
                token = sampler.sample(context, 0)
                kept = 0
                for index, draft in enumerate(drafts, start=1):
                    if reason is not None or token != draft or self._cancel.is_set():
                        break
                    kept += 1
                    if progress.ends_with(token):  # an end token, or the last: fed below
                        break
                    cache.tokens.append(token)
                    events, reason = progress.feed(token)
                    yield from events
                    token = sampler.sample(context, index)
                drafter.stats.accepted += kept
                governor.record(len(drafts), kept)
                self._drop_after(len(cache.tokens))  # the drafts the model did not keep
                drafter.kept(len(cache.tokens))
                if reason is not None:
                    failed = False
                    return reason
            failed = False
        finally:
            b.llama_batch_free(batch)
            drafter.kept(len(cache.tokens))
            drafter.finish(clean=not failed)  # a failed decode's rows are not to be read
        events, last = progress.feed(token)
        yield from events
        if last is not None:
            return last
        return "cancelled" if self._cancel.is_set() else "context_full"

    def _give_up(self, governor: DraftGovernor, drafter: Drafter, sampler: Sampler) -> bool:
        """Whether to stop drafting for the rest of the reply and sample in the graph again:
        after a head's first pause (it cannot catch up in the reply), the n-gram drafter's
        `GIVE_UP_PAUSES`th, or a stretch where drafts saved too few decodes; only when the
        chain may move into the graph, which it then does (before the next decode, whose next
        token it samples)."""
        pauses = GIVE_UP_PAUSES if drafter.resumes_after_pause else 1
        if not self.graph_later or not (governor.low_yield or governor.pauses >= pauses):
            return False
        return sampler.enter_graph(self._loaded.context)

    def _decode_with_drafts(self, batch: Any, token: int, drafts: list[int]) -> None:
        """Decode `token` and its `drafts` in one batch, with logits at every position."""
        position = len(self._cache.tokens)
        for index, each in enumerate([token, *drafts]):
            batch.token[index] = each
            batch.pos[index] = position + index
            batch.n_seq_id[index] = 1
            batch.seq_id[index][0] = self._cache.sequence
            batch.logits[index] = 1
        batch.n_tokens = len(drafts) + 1
        if self._bindings.llama_decode(self._loaded.context, batch) != 0:
            raise BackendError(
                _("llama.cpp failed to evaluate the next token"), kind="decode_failed"
            )

    def _drop_after(self, kept: int) -> None:
        """Take the drafts the model did not keep out of the cache (those after `kept`)."""
        memory = self._bindings.llama_get_memory(self._loaded.context)
        self._bindings.llama_memory_seq_rm(memory, self._cache.sequence, kept, -1)

    def prefill(self, prefix: list[int]) -> int:
        """Bring the cache to `prefix` without sampling; returns the tokens evaluated.

        The last token goes in a batch of its own, as a reply's tokens do: on a GPU the first
        reply after a load started in 0.16 s against 0.03 s later (bench/RESULTS.md), and a
        one-token decode here means to take that first-time cost out of the reply.
        """
        if self._cancel.is_set():  # before `prepare`, which would trim what newer work cached
            return 0
        cached = self._prepare(prefix)
        rest = prefix[cached:]
        self._evaluate(rest[:-1], PREFILL_CHUNK)
        if not self._cancel.is_set():
            self._evaluate(rest[-1:])
        return len(self._cache.tokens) - cached

    def _prepare(self, prompt: list[int]) -> int:
        """`PromptCache.prepare`, keeping no more than a drafter following the cache can
        resume from; returns the tokens kept."""
        if self.drafter is None:
            return self._cache.prepare(prompt, key=self.cache_key)
        kept = self._cache.prepare(prompt, self.drafter.usable_prefix(prompt), self.cache_key)
        self.drafter.resume(kept)
        return kept

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
                raise prompt_failure(status)
            if self.drafter is not None:
                self.drafter.observe(chunk, len(self._cache.tokens))
            self._cache.tokens.extend(chunk)

    def _stats(
        self, progress: ReplyProgress, prompt: list[int], cached: int, reason: StopReason
    ) -> Stats:
        used = len(self._cache.tokens)
        return progress.stats(len(prompt), cached, reason, self._context_size, used)
