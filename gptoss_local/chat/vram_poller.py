"""Live VRAM for the status bar: NVML read now and then, one read at a time, on another thread.

NVML calls can block while a driver is busy, so each read is short work on another thread that
a timer of the UI starts (`poll`), never a loop: when the UI stops its timer at most one read is
left to finish, and a slow driver never gets a second read while one waits. Without a GPU the
first read gives None and polling stops, so the bar shows no VRAM field at all.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from gptoss_local.chat.threads import RunInThread, start_thread
from gptoss_local.hardware.vram import VramMonitor, VramUse

INTERVAL = 2.0  # seconds between reads: fresh enough to watch a model load


class VramPoller:
    """Reads `monitor` when asked and reports each reading until one is None.

    Args:
        monitor: Reads VRAM use; None measures nothing.
        report: Called with each reading, on the reading thread; None is the last one.
        run_in_thread: Starts a read on another thread (the TUI passes a thread worker).
        interval: Seconds between reads, for the UI's timer.
    """

    def __init__(
        self,
        monitor: VramMonitor | None,
        report: Callable[[VramUse | None], object],
        run_in_thread: RunInThread = start_thread,
        interval: float = INTERVAL,
    ) -> None:
        self.monitor = monitor
        self.report = report
        self.interval = interval
        self._run = run_in_thread
        self._lock = threading.Lock()
        self._reading = False
        self._stopped = monitor is None

    @property
    def active(self) -> bool:
        """Whether reads may still give something (a GPU answered, or none was asked yet)."""
        monitor = self.monitor
        return not self._stopped and monitor is not None and monitor.available

    def poll(self) -> bool:
        """Start a read unless one is running or polling has stopped; whether one started."""
        with self._lock:
            if not self.active or self._reading:
                return False
            self._reading = True
        self._run(self._read)
        return True

    def close(self) -> None:
        """Stop polling and shut NVML down; a read still running then gives None."""
        with self._lock:
            self._stopped = True
        if self.monitor is not None:
            self.monitor.close()

    def _read(self) -> None:
        monitor = self.monitor
        use = monitor.read() if monitor is not None else None
        with self._lock:
            self._reading = False
            if use is None:
                self._stopped = True
        self.report(use)
