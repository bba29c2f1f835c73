"""The status bar: model, context use, the last reply's speed, effort, placement, VRAM, backend.

Ordered by how often people look: a narrow terminal cuts the end of the line, so the figures
that change with every reply come right after the model's name. Each fact is a reactive field:
setting one redraws the bar (as toolong's `LogFooter` does), so nobody has to ask for a refresh.
The bar reads live VRAM itself (`chat.vram_poller.VramPoller`, each read on a thread worker)
while a GPU answers.
"""

from __future__ import annotations

from collections.abc import Callable

from textual import on
from textual.content import Content
from textual.reactive import reactive
from textual.timer import Timer
from textual.widget import Widget

from gptoss_local.backends.base import BackendInfo, Stats
from gptoss_local.chat.vram_poller import VramPoller
from gptoss_local.hardware.vram import VramMonitor, VramUse
from gptoss_local.i18n import N_, _, translate
from gptoss_local.tui.messages import VramMeasured

WARN_FRACTION = 0.9  # warn when the conversation fills this much of the context
LOADING = N_("loading the model…")


class StatusBar(Widget):
    """One line of facts about the model and the last reply.

    Args:
        effort: The open chat's reasoning effort.
        vram: Reads VRAM use; None shows no VRAM field.
    """

    DEFAULT_CSS = """
    StatusBar {
        height: 1; padding: 0 1; background: $panel; color: $text-muted;
        text-wrap: nowrap; text-overflow: ellipsis;
    }
    StatusBar.-warning { background: $warning-muted; color: $text; }
    """

    info: reactive[BackendInfo | None] = reactive(None)  # what is loaded; None until then
    stats: reactive[Stats | None] = reactive(None)  # of the open chat's last reply
    effort = reactive("medium")
    vram: reactive[VramUse | None] = reactive(None)  # live; None without a GPU
    note = reactive("")
    waiting = reactive("")  # instead of the model until it is loaded ("" says loading)

    def __init__(self, effort: str, vram: VramMonitor | None = None) -> None:
        super().__init__()
        self.set_reactive(StatusBar.effort, effort)
        self.poller = VramPoller(vram, lambda use: self.post_message(VramMeasured(use)),
                                 self._read_in_worker)  # fmt: skip
        self._timer: Timer | None = None

    @property
    def polling(self) -> bool:
        """Whether VRAM is still read now and then."""
        return self._timer is not None

    def on_mount(self) -> None:
        if self.poller.active:
            self._timer = self.set_interval(self.poller.interval, self.poller.poll)
            self.poller.poll()

    def on_unmount(self) -> None:
        self.poller.close()  # NVML is shut down with the bar

    def _read_in_worker(self, read: Callable[[], None]) -> None:
        self.run_worker(read, thread=True, group="vram", exit_on_error=False)

    @on(VramMeasured)
    def _measured(self, message: VramMeasured) -> None:
        if message.use is None and self._timer is not None:  # no more reads come
            self._timer.stop()
            self._timer = None
        self.vram = message.use

    def _context_use(self) -> tuple[int, int]:
        """(used, size) of the context; size 0 when unknown."""
        info, stats = self.info, self.stats
        # The loaded model's context, not the one a saved chat's last reply was written with.
        size = info.context_size if info else 0
        size = size or (stats.context_size if stats else 0)
        return (stats.context_used if stats else 0), size

    def _near_full(self) -> bool:
        used, size = self._context_use()
        return bool(size) and used >= WARN_FRACTION * size

    def _context_changed(self) -> None:
        self.set_class(self._near_full(), "-warning")

    watch_info = watch_stats = _context_changed

    def render(self) -> Content:
        """The line, from the current facts (Content: a model's name is never markup)."""
        info, stats = self.info, self.stats
        parts = [info.model if info else (self.waiting or translate(LOADING))]
        used, size = self._context_use()
        if size:
            parts.append(_("context {used:,}/{size:,}").format(used=used, size=size))
        if stats and stats.ttft_seconds is not None:
            parts.append(_("TTFT {seconds:.2f}s").format(seconds=stats.ttft_seconds))
        if stats and stats.decode_tokens_per_second:
            parts.append(_("{speed:.0f} tok/s").format(speed=stats.decode_tokens_per_second))
        parts.append(_("effort {effort}").format(effort=self.effort))
        if info is not None:
            parts.append(info.placement)
        if self.vram is not None:  # also while loading: the user sees the model arrive
            parts.append(self.vram.text())
        if info is not None:
            parts.append(info.backend)
        if self._near_full():  # first, so that a narrow terminal still shows it
            parts.insert(0, _("⚠ context nearly full: start a new chat"))
        if self.note:
            parts.append(self.note)
        return Content("  ·  ".join(parts))
