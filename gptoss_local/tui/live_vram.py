"""Live VRAM in the status bar: NVML is read every few seconds on a thread worker.

A mixin of `ChatApp`. NVML calls can block while a driver is busy, so each read is a short
thread worker started by a timer, never a loop: at exit the timer stops with the app and at most
one read is left to finish. Without a GPU the first read gives None and polling stops, so the bar
shows no VRAM field at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.message import Message

from gptoss_local.hardware.vram import VramMonitor, VramUse
from gptoss_local.tui.status import StatusBar

if TYPE_CHECKING:
    from textual.app import App
    from textual.timer import Timer

    _Base = App[None]
else:
    _Base = object


@dataclass
class VramMeasured(Message):
    """A read of VRAM use finished; None: no GPU, or NVML failed (no more reads come)."""

    use: VramUse | None


class LiveVram(_Base):
    """Polls `vram` while a GPU answers and shows the result in the `StatusBar`."""

    vram: VramMonitor | None = None  # set by `make_app`; None measures nothing
    vram_interval = 2.0  # seconds between reads: fresh enough to watch a model load
    _vram_timer: Timer | None = None
    _vram_reading = False  # a read is on a worker thread: a slow driver gets no second one

    def start_vram(self) -> None:
        """Read VRAM now and then every `vram_interval` seconds, until a read gives None."""
        if self.vram is None or not self.vram.available:
            return
        self._vram_timer = self.set_interval(self.vram_interval, self._poll_vram)
        self._poll_vram()

    def _poll_vram(self) -> None:
        monitor = self.vram
        if monitor is None or self._vram_reading:
            return
        self._vram_reading = True
        self.run_worker(
            lambda: self.post_message(VramMeasured(monitor.read())),
            group="vram",
            thread=True,
            exit_on_error=False,
        )

    # Handlers by name: `@on` is only collected on Textual classes, and this mixin is not one.
    def on_vram_measured(self, message: VramMeasured) -> None:
        """Show the new reading; stop polling once there is nothing to read."""
        self._vram_reading = False
        if message.use is None and self._vram_timer is not None:
            self._vram_timer.stop()
            self._vram_timer = None
        bars = self.query(StatusBar)
        if not bars:  # a read that lands while the app is closing
            return
        status = bars.first()
        if status.vram != message.use:
            status.vram = message.use
            status.refresh_text()

    def on_unmount(self) -> None:
        """Stop polling and shut NVML down as the app closes."""
        if self._vram_timer is not None:
            self._vram_timer.stop()
        if self.vram is not None:
            self.vram.close()
