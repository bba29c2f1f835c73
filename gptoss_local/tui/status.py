"""The status bar: model, context use, the last reply's speed, effort, placement, VRAM, backend.

Ordered by how often people look: a narrow terminal cuts the end of the line, so the figures
that change with every reply come right after the model's name. Each fact is a reactive field:
setting one redraws the bar (as toolong's `LogFooter` does), so nobody has to ask for a refresh.
"""

from __future__ import annotations

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from gptoss_local.backends.base import BackendInfo, Stats
from gptoss_local.hardware.vram import VramUse

WARN_FRACTION = 0.9  # warn when the conversation fills this much of the context
LOADING = "loading the model…"


class StatusBar(Widget):
    """One line of facts about the model and the last reply."""

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

    def __init__(self, effort: str) -> None:
        super().__init__()
        self.set_reactive(StatusBar.effort, effort)

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
        parts = [info.model if info else (self.waiting or LOADING)]
        used, size = self._context_use()
        if size:
            parts.append(f"context {used:,}/{size:,}")
        if stats and stats.ttft_seconds is not None:
            parts.append(f"TTFT {stats.ttft_seconds:.2f}s")
        if stats and stats.decode_tokens_per_second:
            parts.append(f"{stats.decode_tokens_per_second:.0f} tok/s")
        parts.append(f"effort {self.effort}")
        if info is not None:
            parts.append(info.placement)
        if self.vram is not None:  # also while loading: the user sees the model arrive
            parts.append(self.vram.text())
        if info is not None:
            parts.append(info.backend)
        if self._near_full():  # first, so that a narrow terminal still shows it
            parts.insert(0, "⚠ context nearly full: start a new chat")
        if self.note:
            parts.append(self.note)
        return Content("  ·  ".join(parts))
