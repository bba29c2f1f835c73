"""Runs one reply on the worker thread: the tool loop → history rows and batched UI messages.

Plain Python apart from the messages it posts, so the batching is easy to reason about: a fast
model yields thousands of deltas a second, but the UI gets at most one `ReplyStreamed` per
`interval`, which keeps the message queue (and the Markdown stream) from falling behind.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable

from textual.message import Message

from gptoss_local import heap
from gptoss_local.backends.base import BackendError, Stats
from gptoss_local.chat.context_keeper import ContextFull, ContextKeeper
from gptoss_local.chat.engine_queue import QueueWatch
from gptoss_local.chat.next_reply import NextReply
from gptoss_local.conversation import Citation
from gptoss_local.events import AnswerDelta, PreambleDelta, ReasoningDelta
from gptoss_local.i18n import _
from gptoss_local.session.errors import HistoryError
from gptoss_local.tools import (
    ChainEnded,
    HistoryRecorder,
    ReplyEnded,
    ToolCallApproved,
    ToolCallDenied,
    ToolCallFinished,
    ToolCallRequested,
    ToolLoop,
)
from gptoss_local.tui.messages import (
    ContextRefused,
    EngineWaiting,
    ReplyContinued,
    ReplyFailed,
    ReplyFinished,
    ReplyStreamed,
    ToolCallReported,
)

Post = Callable[[Message], object]
TOOL_STEPS = (ToolCallRequested, ToolCallApproved, ToolCallDenied, ToolCallFinished)
# Seconds between UI updates of a streaming reply, and the GIL switch interval while the app
# runs. The engine thread needs the GIL for a moment per token; every UI update (Markdown, layout)
# holds it for milliseconds. On an H200 with the 20b shape, 4 replies of 256 tokens: 172-202
# tokens/s at Python's 5 ms and 50 ms updates, 273-285 at 0.5 ms and 200 ms, against ~300
# without a UI (bench/results/gpu/tui-intervals-h200.txt). Since the engine queues the next
# token before it handles this one, a switch of 0.1 ms keeps 0.95-0.97 of its 307 t/s after the
# first reply, against 0.84-0.93 at 0.5 ms (bench/results/gpu/tui-switch-h200.txt); with
# `heap.settle` after loads and replies, 0.95-1.00 of it from the first reply on.
BATCH_INTERVAL = 0.2
SWITCH_INTERVAL = 0.0001


class Batcher:
    """Collects text deltas and posts them together at most every `interval` seconds."""

    def __init__(
        self, post: Post, interval: float | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._post, self._clock = post, clock
        self._interval = BATCH_INTERVAL if interval is None else interval
        self._reasoning: list[str] = []
        self._answer: list[str] = []
        self._last = float("-inf")  # so the first delta goes out at once (visible TTFT)

    def add(self, event: object) -> None:
        """Take one backend event; text deltas are kept, and sent when the interval is up."""
        if isinstance(event, ReasoningDelta):
            self._reasoning.append(event.text)
        elif isinstance(event, AnswerDelta | PreambleDelta):
            self._answer.append(event.text)
        else:
            return
        if self._clock() - self._last >= self._interval:
            self.flush()

    def flush(self) -> None:
        """Send whatever text is waiting."""
        if self._reasoning or self._answer:
            self._post(ReplyStreamed("".join(self._reasoning), "".join(self._answer)))
            self._reasoning.clear()
            self._answer.clear()
        self._last = self._clock()


def run_reply(
    loop: Callable[[], ToolLoop],
    recorder: HistoryRecorder,
    reply: NextReply,
    cancel: threading.Event,
    post: Post,
    keeper: ContextKeeper | None = None,
) -> None:
    """Run one reply (with its tool calls) into the history through `recorder`, posting
    batches of text, each step of a call, the start of each later model turn, then how it ended.

    `loop` is called here, on the worker: it may wait for the model to load and the tools to
    start. Then the reply's one request is made from `reply`, as its prefill made it (the
    loop's tools offered as the engine can offer them: `chat.next_reply`), and `keeper` fits
    its prompt into the context (summarising older turns if it must; a message that cannot fit
    posts `ContextRefused` and nothing is generated). Never raises: a `BackendError` (or any
    other failure, which must not kill the app) marks the turn in progress failed and posts
    `ReplyFailed`, which carries the `HistoryError` if the history failed.
    """
    batcher = Batcher(post)
    stats: Stats | None = None
    ended = "answered"
    turn_over = False  # a model turn ended: what comes next belongs to a new one
    citations: tuple[Citation, ...] = ()
    try:
        tools = loop()
        request = reply.request(tools.backend, tools.registry)  # the reply's one request
        if keeper is not None:
            try:
                request = keeper.fit(tools.backend, request, cancel)
            except ContextFull as exc:
                post(ContextRefused(str(exc)))
                return
        queue = QueueWatch(tools.backend, lambda client: post(EngineWaiting(client)))
        with queue:  # a shared engine may serve another program's reply first
            for event in tools.run(request, cancel):
                queue.stop()  # its turn came: nothing to wait for any more
                recorder(event)
                if isinstance(event, ChainEnded):
                    ended = event.reason
                    continue
                if isinstance(event, TOOL_STEPS):
                    batcher.flush()
                    post(ToolCallReported(event))
                    continue
                if turn_over:  # the first event (or the end) of the next model turn
                    post(ReplyContinued())
                    turn_over = False
                if isinstance(event, ReplyEnded):
                    stats, turn_over, citations = event.stats, True, event.citations
                    batcher.flush()
                else:
                    batcher.add(event)
        batcher.flush()
        post(ReplyFinished(stats, cancel.is_set(), ended, citations))
        heap.settle()  # this reply's garbage now, while the user reads it
    except Exception as exc:  # any failure becomes a notification, never a crashed app
        batcher.flush()
        known = isinstance(exc, BackendError | HistoryError)
        message = str(exc) if known else _("unexpected error: {error!r}").format(error=exc)
        failed = exc if isinstance(exc, HistoryError) else None
        try:
            recorder.fail(message)
        except Exception as again:  # the history itself may be what failed
            if failed is None:
                message = _("{error} (and the reply could not be saved: {again})").format(
                    error=message, again=again
                )
                failed = again if isinstance(again, HistoryError) else None
        post(ReplyFailed(message, failed))


def favour_the_engine_thread() -> float:
    """Shorten the GIL switch interval for the app's lifetime; returns the one to restore."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL)
    return before
