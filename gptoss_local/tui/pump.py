"""Runs one reply on the worker thread: backend stream → history rows and batched UI messages.

Plain Python apart from the messages it posts, so the batching is easy to reason about: a fast
model yields thousands of deltas a second, but the UI gets at most one `ReplyStreamed` per
`interval`, which keeps the message queue (and the Markdown stream) from falling behind.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from dataclasses import replace

from textual.message import Message

from gptoss_local.backends.base import (
    Backend,
    BackendError,
    Conversation,
    GenerationSettings,
    Stats,
)
from gptoss_local.events import AnswerDelta, PreambleDelta, ReasoningDelta
from gptoss_local.kinds import Effort
from gptoss_local.session.errors import HistoryError
from gptoss_local.session.history import History
from gptoss_local.tui.messages import ReplyFailed, ReplyFinished, ReplyStreamed

Post = Callable[[Message], object]
# Seconds between UI updates of a streaming reply, and the GIL switch interval while the app
# runs. The engine thread needs the GIL for a moment per token; every UI update (Markdown, layout)
# holds it for milliseconds. On an H200 with the 20b shape, 4 replies of 256 tokens: 172-202
# tokens/s at Python's 5 ms and 50 ms updates, 273-285 at 0.5 ms and 200 ms, against ~300
# without a UI (bench/results/gpu/tui-intervals-h200.txt).
BATCH_INTERVAL = 0.2
SWITCH_INTERVAL = 0.0005


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
    backend: Callable[[], Backend],
    history: History,
    reply_id: int,
    conversation: Conversation,
    settings: GenerationSettings,
    cancel: threading.Event,
    post: Post,
) -> None:
    """Stream one reply into history row `reply_id`, posting batches, then how it ended.

    Never raises: a `BackendError` (or any other failure, which must not kill the app) marks the
    reply failed and posts `ReplyFailed`, which carries the `HistoryError` if the history failed.
    """
    batcher = Batcher(post)
    stats: Stats | None = None
    try:
        reply = backend().stream(conversation, settings, cancel)
        for item in reply:
            history.record(reply_id, item)
            batcher.add(item)
        stats = reply.stats
        batcher.flush()
        if cancel.is_set():
            history.mark_stopped(reply_id, stats)
        else:
            history.finish_assistant(reply_id, stats)
        post(ReplyFinished(stats, cancel.is_set()))
    except Exception as exc:  # any failure becomes a notification, never a crashed app
        batcher.flush()
        known = isinstance(exc, BackendError | HistoryError)
        message = str(exc) if known else f"unexpected error: {exc!r}"
        failed = exc if isinstance(exc, HistoryError) else None
        try:
            history.fail_assistant(reply_id, message, stats)
        except Exception as again:  # the history itself may be what failed
            if failed is None:
                message += f" (and the reply could not be saved: {again})"
                failed = again if isinstance(again, HistoryError) else None
        post(ReplyFailed(message, failed))


def favour_the_engine_thread() -> float:
    """Shorten the GIL switch interval for the app's lifetime; returns the one to restore."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL)
    return before


def with_effort(settings: GenerationSettings, effort: Effort) -> GenerationSettings:
    """`settings` with the chat's reasoning effort."""
    return replace(settings, effort=effort)
