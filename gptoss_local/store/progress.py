"""Progress of long store tasks, reported through a callback at a bounded rate."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Progress:
    """One progress report.

    Attributes:
        phase: "check" (re-hashing bytes already on disk), "download", "copy" or "verify".
        name: The file (or, for a download, the model) being worked on.
        done: Bytes done so far; for a download, over all shards of the model.
        total: Bytes in all.
        speed: Bytes per second over the last few seconds (0 until known).
    """

    phase: str
    name: str
    done: int
    total: int
    speed: float


ProgressFn = Callable[[Progress], None]
Notice = Callable[[str], None]


def ignore_progress(_: Progress) -> None:
    """A progress callback that drops every report."""


def ignore_notice(_: str) -> None:
    """A notice callback that drops every message."""


class Meter:
    """Counts bytes and calls `report` at most every `interval` seconds, with a windowed speed.

    Progress is noisy (a call per MiB); coalescing here keeps a UI or terminal from flooding.
    """

    def __init__(
        self,
        report: ProgressFn,
        phase: str,
        name: str,
        total: int,
        done: int = 0,
        interval: float = 0.1,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.report, self.phase, self.name, self.total = report, phase, name, total
        self.done, self._interval, self._clock = done, interval, clock
        self._samples: deque[tuple[float, int]] = deque([(clock(), done)])
        self._last = float("-inf")

    def add(self, n: int) -> None:
        """Count `n` more bytes."""
        self.set(self.done + n)

    def set(self, done: int) -> None:
        """Set the count (it goes down when a download starts over)."""
        if done < self.done:
            self._samples.clear()
        self.done = done
        now = self._clock()
        if now - self._last >= self._interval or done == self.total:
            self._emit(now)

    def finish(self) -> None:
        """Report the final count whatever the rate limit."""
        self._emit(self._clock())

    def _emit(self, now: float) -> None:
        self._last = now
        self._samples.append((now, self.done))
        while len(self._samples) > 2 and now - self._samples[0][0] > 5.0:
            self._samples.popleft()
        t0, d0 = self._samples[0]
        speed = (self.done - d0) / (now - t0) if now > t0 and self.done >= d0 else 0.0
        self.report(Progress(self.phase, self.name, self.done, self.total, speed))
