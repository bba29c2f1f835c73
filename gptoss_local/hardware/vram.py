"""VRAM in use right now, read through NVML for the chat's status bar.

`VramMonitor.read()` never raises: without the bindings, a driver or a GPU, or after any NVML
failure, it returns None and stops trying, so a machine without a GPU pays for one failed attempt
only. NVML is injectable as in `hardware.probe`, so tests can describe any card.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass
from typing import Any

from gptoss_local.hardware.machine import load_nvml
from gptoss_local.units import GIB, gib


@dataclass(frozen=True)
class VramUse:
    """Memory of every GPU together, in bytes; with several cards, each card's (used, total)
    in NVML's order too."""

    used: int
    total: int
    cards: tuple[tuple[int, int], ...] = ()

    def text(self) -> str:
        """As the status bar shows it: "VRAM 11.8/24.0 GiB", or per card
        "VRAM 21.3/24.0 + 11.0/12.0 GiB"."""
        if len(self.cards) > 1:
            each = " + ".join(f"{used / GIB:.1f}/{total / GIB:.1f}" for used, total in self.cards)
            return f"VRAM {each} GiB"
        return f"VRAM {self.used / GIB:.1f}/{gib(self.total)}"

    def short(self) -> str:
        """The narrow bar's form: whole GiB per card, "VRAM 21/24+11/12 GiB"."""
        if len(self.cards) > 1:
            each = "+".join(f"{used / GIB:.0f}/{total / GIB:.0f}" for used, total in self.cards)
            return f"VRAM {each} GiB"
        return self.text()


class VramMonitor:
    """Reads VRAM use on demand; NVML is started on the first read and shut down by `close`.

    Reads come from a worker thread and `close` from the UI thread, hence the lock.

    Args:
        nvml: An object with pynvml's functions; None loads the real module on the first read.
    """

    def __init__(self, nvml: Any = None) -> None:
        self._nvml = nvml
        self._handles: list[Any] | None = None  # None: NVML not started yet
        self._given_up = False
        self._lock = threading.Lock()

    @property
    def available(self) -> bool:
        """False once a read has failed (or `close` was called): reads return None from then on."""
        return not self._given_up

    def read(self) -> VramUse | None:
        """Used and total VRAM summed over all GPUs, and each card's when there are several;
        None without a GPU or after a failure."""
        with self._lock:
            if self._given_up:
                return None
            try:
                handles = self._start() if self._handles is None else self._handles
                cards = []
                for handle in handles:
                    memory = self._nvml.nvmlDeviceGetMemoryInfo(handle)
                    cards.append((int(memory.used), int(memory.total)))
            except Exception:  # ImportError, NVMLError, OSError from a broken driver library
                self._give_up()
                return None
            if not handles:  # NVML works but sees no GPU: nothing to show, ever
                self._give_up()
                return None
            used, total = sum(c[0] for c in cards), sum(c[1] for c in cards)
            return VramUse(used, total, tuple(cards) if len(cards) > 1 else ())

    def close(self) -> None:
        """Shut NVML down (if it was started); later reads return None."""
        with self._lock:
            self._give_up()

    def _start(self) -> list[Any]:
        if self._nvml is None:
            self._nvml = load_nvml()
        self._nvml.nvmlInit()
        self._handles = []  # started: from now on `_give_up` shuts NVML down
        count = self._nvml.nvmlDeviceGetCount()
        self._handles = [self._nvml.nvmlDeviceGetHandleByIndex(i) for i in range(count)]
        return self._handles

    def _give_up(self) -> None:
        if self._handles is not None:
            with contextlib.suppress(Exception):  # the driver is in trouble: nothing more to do
                self._nvml.nvmlShutdown()
        self._handles = None
        self._given_up = True
