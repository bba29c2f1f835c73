"""The status bar: model, backend, placement, VRAM in use, effort, context, last reply's speed."""

from __future__ import annotations

from textual.widgets import Static

from gptoss_local.backends.base import BackendInfo, Stats
from gptoss_local.vram import VramUse

WARN_FRACTION = 0.9  # warn when the conversation fills this much of the context


class StatusBar(Static):
    """One line of facts about the model and the last reply."""

    DEFAULT_CSS = """
    StatusBar { height: 1; padding: 0 1; background: $panel; color: $text-muted; }
    StatusBar.-warning { background: $warning-muted; color: $text; }
    """

    def __init__(self, effort: str) -> None:
        super().__init__("loading the model…", markup=False)
        self.info: BackendInfo | None = None
        self.stats: Stats | None = None
        self.effort = effort
        self.vram: VramUse | None = None  # live, from `LiveVram`; None without a GPU
        self.note = ""

    def refresh_text(self) -> None:
        """Render the bar from the current facts."""
        parts: list[str] = []
        if self.info is not None:
            parts += [self.info.model, self.info.backend, self.info.placement]
        else:
            parts.append("loading the model…")
        if self.vram is not None:  # also while loading: the user sees the model arrive
            parts.append(self.vram.text())
        parts.append(f"effort {self.effort}")
        size = self.stats.context_size if self.stats and self.stats.context_size else 0
        size = size or (self.info.context_size if self.info else 0)
        used = self.stats.context_used if self.stats else 0
        if size:
            parts.append(f"context {used:,}/{size:,}")
        if self.stats and self.stats.ttft_seconds is not None:
            parts.append(f"TTFT {self.stats.ttft_seconds:.2f}s")
        if self.stats and self.stats.decode_tokens_per_second:
            parts.append(f"{self.stats.decode_tokens_per_second:.0f} tok/s")
        near = bool(size) and used >= WARN_FRACTION * size
        if near:  # first, so that a narrow terminal still shows it
            parts.insert(0, "⚠ context nearly full: start a new chat")
        if self.note:
            parts.append(self.note)
        self.set_class(near, "-warning")
        self.update("  ·  ".join(parts))
