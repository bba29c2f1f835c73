"""The status bar: model, context use, the last reply's speed, effort, placement, VRAM, backend.

Ordered by how often people look: a narrow terminal cuts the end of the line, so the figures
that change with every reply come right after the model's name.
"""

from __future__ import annotations

from textual.widgets import Static

from gptoss_local.backends.base import BackendInfo, Stats
from gptoss_local.hardware.vram import VramUse

WARN_FRACTION = 0.9  # warn when the conversation fills this much of the context


class StatusBar(Static):
    """One line of facts about the model and the last reply."""

    DEFAULT_CSS = """
    StatusBar {
        height: 1; padding: 0 1; background: $panel; color: $text-muted;
        text-wrap: nowrap; text-overflow: ellipsis;
    }
    StatusBar.-warning { background: $warning-muted; color: $text; }
    """

    def __init__(self, effort: str) -> None:
        super().__init__("loading the model…", markup=False)
        self.info: BackendInfo | None = None
        self.stats: Stats | None = None
        self.effort = effort
        self.vram: VramUse | None = None  # live, from `LiveVram`; None without a GPU
        self.note = ""
        self.waiting = ""  # instead of the model until it is loaded ("" says loading)

    def refresh_text(self) -> None:
        """Render the bar from the current facts."""
        info, stats = self.info, self.stats
        parts = [info.model if info else (self.waiting or "loading the model…")]
        # The loaded model's context, not the one a saved chat's last reply was written with.
        size = info.context_size if info else 0
        size = size or (stats.context_size if stats else 0)
        used = stats.context_used if stats else 0
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
        near = bool(size) and used >= WARN_FRACTION * size
        if near:  # first, so that a narrow terminal still shows it
            parts.insert(0, "⚠ context nearly full: start a new chat")
        if self.note:
            parts.append(self.note)
        self.set_class(near, "-warning")
        self.update("  ·  ".join(parts))
