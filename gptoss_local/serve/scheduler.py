"""Concurrent requests over one loaded model: a fair first-come, first-served queue.

As many replies run at once as the backend decodes together (`Capabilities.parallel`: the
llama.cpp engine's sequences, `serve --parallel`); the others wait their turn in arrival order
(no request can be overtaken for ever), and one whose client went away while waiting leaves
the queue without running. A full queue is refused at once (HTTP 503) rather than left to
time out. Conversations taking turns each keep their prefix: the backend shelves the cache of
the one it leaves in RAM (`backends/llamacpp/saved_states.py`). How many sequences pay, on a
GPU and on a CPU: bench/RESULTS.md ("serve").
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
    """Runs up to `running` requests at once, starting them in arrival order.

    Args:
        max_waiting: Requests that may wait besides those running; more are `Busy`.
        running: Requests that run at once (the backend's `Capabilities.parallel`).
    """

    def __init__(self, max_waiting: int = 64, running: int = 1) -> None:
        self.max_waiting = max_waiting
        self.running = running
        self._changed = threading.Condition()
        self._waiting: deque[object] = deque()
        self._busy = 0

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
            if len(self._waiting) + max(0, self._busy - self.running + 1) > self.max_waiting:
                raise Busy
            self._waiting.append(ticket)
            try:
                while self._busy >= self.running or self._waiting[0] is not ticket:
                    if cancel.is_set():
                        raise Gone
                    self._changed.wait(POLL_SECONDS)
            except BaseException:
                self._waiting.remove(ticket)
                self._changed.notify_all()
                raise
            self._waiting.popleft()
            self._busy += 1
            self._changed.notify_all()  # the next in line may fit too
        try:
            yield time.monotonic() - started
        finally:
            with self._changed:
                self._busy -= 1
                self._changed.notify_all()

    @contextmanager
    def try_slot(self) -> Iterator[bool]:
        """Hold a slot only if one is free now and nobody waits (work that may give way,
        a prefill); yields whether it holds one."""
        with self._changed:
            free = not self._waiting and self._busy < self.running
            if free:
                self._busy += 1
        try:
            yield free
        finally:
            if free:
                with self._changed:
                    self._busy -= 1
                    self._changed.notify_all()
