"""Several replies decoded together, one token each per `llama_decode`, on llama.cpp sequences.

On a GPU a batch of eight tokens costs little more than one (decode reads the weights once per
step), so eight clients of `serve` got 1.7 times the tokens per second of a queue on an H200,
and their first tokens without waiting for the others' replies (bench/RESULTS.md, "serve"). One
thread owns the context: each step it adds the next token of every generating reply and a
chunk of each new prompt to one batch, decodes it, samples each reply's token at its place in
the batch, and hands the events to the request's thread through a queue.

The sequences share one KV cache (`kv_unified`) of the loaded context size. A sequence keeps
its conversation's cache when its reply ends, for the next turn; when the cells run out, idle
sequences give theirs up first (to the state shelf, when there is one), then the reply that
joined last is ended with "context_full".
"""

from __future__ import annotations

import itertools
import queue
import threading
import time
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

from gptoss_local.backends.base import BackendError, GenerationSettings, Stats, StopReason
from gptoss_local.backends.llamacpp import native
from gptoss_local.backends.llamacpp.options import LlamaOptions
from gptoss_local.backends.llamacpp.prompt_cache import PromptCache
from gptoss_local.backends.llamacpp.reply_progress import ReplyProgress
from gptoss_local.backends.llamacpp.sampling import KeptSampler, Sampler
from gptoss_local.backends.llamacpp.structured.gate import Constraint
from gptoss_local.events import Event
from gptoss_local.i18n import _

NO_CELLS = 1  # llama_decode's status when the KV cache has no room for the batch
POLL_SECONDS = 1.0  # how often a reader waiting for events checks that the decoder still runs


@dataclass
class Request:
    """One reply asked of the decoder."""

    prompt: list[int]
    settings: GenerationSettings
    options: LlamaOptions
    cancel: threading.Event
    started: float = field(default_factory=time.perf_counter)
    out: queue.SimpleQueue[Any] = field(default_factory=queue.SimpleQueue)
    gone: threading.Event = field(default_factory=threading.Event)  # its reader stopped
    turn_start: bool = False  # the prompt ends with the user's message (`prompt_done`)
    constraint: Constraint | None = None  # a response format's or tool choice's grammar
    cache_key: str | None = None  # reuses only caches of this key (`PromptCache.prepare`)

    def cancelled(self) -> bool:
        return self.cancel.is_set() or self.gone.is_set()


@dataclass
class _Slot:
    """A sequence and the reply it is decoding, if any."""

    cache: PromptCache
    samplers: KeptSampler
    request: Request | None = None
    progress: ReplyProgress | None = None
    sampler: Sampler | None = None
    cached: int = 0
    pending: list[int] = field(default_factory=list)  # prompt tokens not evaluated yet
    next_token: int | None = None  # sampled, to be decoded in the next step
    joined: int = 0
    last_used: int = 0


class ParallelDecoder:
    """Decodes up to `len(caches)` replies at once on one llama.cpp context.

    Args:
        loaded: The native model, context and vocabulary.
        caches: One prompt cache per sequence (sequence ids 0..n-1).
        pieces: Token ids to bytes.
        stops: End-of-generation tokens and the stop reason each means.
        context_size: The tokens all sequences together may hold (the context loaded).
        lock: Held around every native call (the backend's tokenizing and closing take it).
    """

    def __init__(
        self,
        loaded: Any,
        caches: list[PromptCache],
        pieces: native.PieceCache,
        stops: dict[int, StopReason],
        context_size: int,
        lock: threading.Lock,
    ) -> None:
        self._loaded = loaded
        self._pieces = pieces
        self._stops = stops
        self._lock = lock
        self._slots = [_Slot(cache, KeptSampler(cache.sequence)) for cache in caches]
        self._bindings = native.lib()
        self._context_size = context_size
        self._n_batch = max(len(caches), int(self._bindings.llama_n_batch(loaded.context)))
        self._batch = self._bindings.llama_batch_init(self._n_batch, 0, 1)
        self._incoming: queue.SimpleQueue[Request | None] = queue.SimpleQueue()
        self._waiting: list[Request] = []
        self._order = itertools.count(1)
        self._closing = False
        self._thread = threading.Thread(target=self._run, name="llama-parallel", daemon=True)
        self._thread.start()

    def stream(self, request: Request) -> Generator[Event, None, Stats]:
        """Queue `request` and yield its events as they are decoded; returns its stats."""
        if self._closing:
            raise BackendError(_("the model was closed"))
        self._incoming.put(request)
        try:
            while True:
                try:
                    item = request.out.get(timeout=POLL_SECONDS)
                except queue.Empty:
                    if not self._thread.is_alive():  # closed before it saw this request
                        raise BackendError(_("the model was closed")) from None
                    continue
                if isinstance(item, Stats):
                    return item
                if isinstance(item, BaseException):
                    raise item
                yield from item
        finally:
            request.gone.set()  # a reader that stopped early ends the reply at the next step

    def close(self, timeout: float) -> bool:
        """Stop decoding: replies in progress end with an error. False if the thread is still
        inside a decode after `timeout` seconds."""
        self._closing = True
        self._incoming.put(None)
        self._thread.join(timeout)
        if self._thread.is_alive():
            return False
        for slot in self._slots:
            slot.samplers.drop()
        self._bindings.llama_batch_free(self._batch)
        return True

    def _run(self) -> None:
        while not self._closing:
            self._take_incoming(block=not self._busy())
            if self._closing:
                break
            try:
                with self._lock:
                    self._admit()
                    if self._busy():
                        self._step()
            except Exception as exc:  # never leave a reader waiting for ever
                self._fail_all(exc if isinstance(exc, BackendError) else BackendError(str(exc)))
        self._fail_all(BackendError(_("the model was closed")))

    def _busy(self) -> bool:
        return any(slot.request is not None for slot in self._slots)

    def _take_incoming(self, block: bool) -> None:
        try:
            item = self._incoming.get(block=block and not self._waiting)
            while True:
                if item is not None:
                    self._waiting.append(item)
                item = self._incoming.get_nowait()
        except queue.Empty:
            pass

    def _admit(self) -> None:
        """Give each waiting request, in arrival order, the free sequence whose cache keeps most
        of its prompt (the least recently used one when none keeps anything)."""
        while self._waiting:
            free = [slot for slot in self._slots if slot.request is None]
            if not free:
                return
            request = self._waiting.pop(0)
            if request.cancelled():  # its client left while it waited
                stats = self._progress(request).stats(
                    len(request.prompt), 0, "cancelled", self._context_size, 0
                )
                request.out.put(stats)
                continue
            slot = max(free, key=lambda s: (s.cache.reusable(request.prompt, request.cache_key),
                                            -s.last_used))  # fmt: skip
            self._start(slot, request)

    def _start(self, slot: _Slot, request: Request) -> None:
        slot.request, slot.progress = request, self._progress(request)
        slot.cached = slot.cache.prepare(request.prompt, key=request.cache_key)
        slot.pending = request.prompt[slot.cached :]
        slot.next_token = None
        slot.joined = next(self._order)
        slot.sampler = slot.samplers.get(
            self._loaded.vocab, request.settings, request.options, self._loaded.context,
            request.constraint, self._pieces,
        )  # fmt: skip

    def _progress(self, request: Request) -> ReplyProgress:
        limit = request.settings.max_tokens
        return ReplyProgress(self._pieces, self._stops, limit, request.started, request.constraint)

    def _step(self) -> None:
        """One decode of the next token of every generating reply and prompt chunks."""
        for slot in self._active():
            if slot.request is not None and slot.request.cancelled():
                self._finish(slot, "cancelled")
        entries = self._fill_batch()
        while entries:
            status = self._bindings.llama_decode(self._loaded.context, self._batch)
            if status == 0:
                break
            if status != NO_CELLS:
                for slot in self._active():
                    slot.cache.clear()
                raise BackendError(
                    _("llama.cpp failed to evaluate the batch (status {status})").format(
                        status=status
                    ),
                    kind="decode_failed",
                )
            self._make_room()  # nothing of the batch went in: make room and try again
            entries = self._fill_batch()
        taken: dict[int, list[int]] = {}  # per sequence, the tokens that went in, in order
        for slot, token, _logits in entries:
            taken.setdefault(slot.cache.sequence, []).append(token)
        for slot in self._active():
            tokens = taken.get(slot.cache.sequence)
            if not tokens:
                continue
            slot.cache.tokens.extend(tokens)
            if slot.next_token is not None:
                slot.next_token = None  # a generating reply puts in one token a step
            else:
                del slot.pending[: len(tokens)]
        for index, (slot, _token, logits) in enumerate(entries):
            if logits:
                self._sampled(slot, index)

    def _active(self) -> list[_Slot]:
        return [slot for slot in self._slots if slot.request is not None]

    def _fill_batch(self) -> list[tuple[_Slot, int, bool]]:
        """Put the generating replies' next tokens, then prompt chunks in the order the
        replies joined, into the batch; returns (slot, token, wants logits) per place."""
        entries: list[tuple[_Slot, int, bool]] = []
        for slot in self._active():
            if slot.next_token is not None:
                entries.append((slot, slot.next_token, True))
        for slot in sorted(self._active(), key=lambda s: s.joined):
            room = self._n_batch - len(entries)
            if slot.next_token is not None or not slot.pending or room <= 0:
                continue
            chunk = slot.pending[:room]
            ends_prompt = len(chunk) == len(slot.pending)
            last = len(chunk) - 1
            entries += [(slot, t, ends_prompt and i == last) for i, t in enumerate(chunk)]
        batch = self._batch
        positions: dict[int, int] = {}
        for index, (slot, token, logits) in enumerate(entries):
            sequence = slot.cache.sequence
            position = positions.get(sequence, len(slot.cache.tokens))
            positions[sequence] = position + 1
            batch.token[index] = token
            batch.pos[index] = position
            batch.n_seq_id[index] = 1
            batch.seq_id[index][0] = sequence
            batch.logits[index] = logits
        batch.n_tokens = len(entries)
        return entries

    def _make_room(self) -> None:
        """Free the cells of the idle sequence used longest ago, else end the newest reply
        (its sequence is then idle, and gives its cells up at the next try)."""
        idle = [s for s in self._slots if s.request is None and s.cache.tokens]
        if idle:
            min(idle, key=lambda s: s.last_used).cache.shelve_and_clear()
            return
        newest = max(self._active(), key=lambda s: s.joined)
        self._finish(newest, "context_full")

    def _sampled(self, slot: _Slot, index: int) -> None:
        request, progress, sampler = slot.request, slot.progress, slot.sampler
        assert request is not None and progress is not None and sampler is not None
        if progress.prefill_done is None:
            slot.cache.prompt_done(request.turn_start)
            progress.prompt_evaluated()
        token = sampler.sample(self._loaded.context, index)
        events, reason = progress.feed(token)
        if reason is None and request.cancelled():
            reason = "cancelled"
        if reason is None and len(slot.cache.tokens) + 1 >= self._context_size:
            reason = "context_full"
        if events:
            request.out.put(events)
        if reason is None:
            slot.next_token = token
        else:
            self._finish(slot, reason)

    def _finish(self, slot: _Slot, reason: StopReason) -> None:
        request, progress = slot.request, slot.progress
        assert request is not None and progress is not None
        tail = progress.finish()
        if tail:
            request.out.put(tail)
        used = len(slot.cache.tokens)
        request.out.put(progress.stats(len(request.prompt), slot.cached, reason,
                                       self._context_size, used))  # fmt: skip
        if slot.sampler is not None:
            slot.samplers.release(slot.sampler)
        slot.request = slot.progress = slot.sampler = None
        slot.pending, slot.next_token = [], None
        slot.last_used = next(self._order)

    def _fail_all(self, error: BackendError) -> None:
        for slot in self._active():
            assert slot.request is not None
            slot.request.out.put(error)
            if slot.sampler is not None:
                slot.samplers.release(slot.sampler)
            slot.request = slot.progress = slot.sampler = None
            slot.pending, slot.next_token = [], None
        for request in self._waiting:
            request.out.put(error)
        self._waiting.clear()
        while True:
            try:
                item = self._incoming.get_nowait()
            except queue.Empty:
                return
            if item is not None:
                item.out.put(error)
