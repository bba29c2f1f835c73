"""Concurrent requests over one loaded model: a fair first-come, first-served queue.

The llama.cpp backend holds one KV-cache sequence, so replies run one at a time; a request
waits its turn in arrival order (no request can be overtaken for ever), and one whose client
went away while waiting leaves the queue without running. A full queue is refused at once
(HTTP 503) rather than left to time out. Conversations taking turns each keep their prefix:
the backend shelves the cache of the one it leaves in RAM (`backends/saved_states.py`). Why
not several sequences: see bench/RESULTS.md ("serve").
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager

POLL_SECONDS = 0.1  # how often a waiting request looks whether its client is still there


class Busy(Exception):
    """The queue is full."""


class Gone(Exception):
    """The request was cancelled (its client went away) before its turn came."""


class Scheduler:
    """Runs one request at a time, in arrival order.

    Args:
        max_waiting: Requests that may wait besides the one running; more are `Busy`.
    """

    def __init__(self, max_waiting: int = 64) -> None:
        self.max_waiting = max_waiting
        self._changed = threading.Condition()
        self._waiting: deque[object] = deque()
        self._running = False

    @property
    def waiting(self) -> int:
        """Requests waiting for their turn now."""
        return len(self._waiting)

    @contextmanager
    def slot(self, cancel: threading.Event) -> Iterator[float]:
        """Wait for this request's turn and hold it; yields the seconds it waited.

        Raises:
            Busy: `max_waiting` requests are waiting already.
            Gone: `cancel` was set while it waited.
        """
        ticket, started = object(), time.monotonic()
        with self._changed:
            if len(self._waiting) + int(self._running) > self.max_waiting:
                raise Busy
            self._waiting.append(ticket)
            try:
                while self._running or self._waiting[0] is not ticket:
                    if cancel.is_set():
                        raise Gone
                    self._changed.wait(POLL_SECONDS)
            except BaseException:
                self._waiting.remove(ticket)
                self._changed.notify_all()
                raise
            self._waiting.popleft()
            self._running = True
        try:
            yield time.monotonic() - started
        finally:
            with self._changed:
                self._running = False
                self._changed.notify_all()
