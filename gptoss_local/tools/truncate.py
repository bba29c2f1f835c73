"""Cutting long tool output down to what a model's context can take: its start and its end."""

from __future__ import annotations

# What a tool's result may take in the prompt, in characters (roughly a quarter as many
# tokens). Errors and the end of long output matter most, so the end is kept too.
RESULT_CHARS = 12_000


def cut_marker(count: int, unit: str = "characters") -> str:
    """The line that stands where output was cut."""
    return f"\n[… {count:,} {unit} cut …]\n"


def truncate(text: str, limit: int = RESULT_CHARS) -> tuple[str, bool]:
    """`text`, or its first 60 % and last 40 % of `limit` characters with a marker between.

    Args:
        text: Whole output.
        limit: Most characters kept (the marker comes on top).

    Returns:
        The text to use, and whether anything was cut.
    """
    if len(text) <= limit:
        return text, False
    head = limit * 3 // 5
    tail = limit - head
    cut = len(text) - head - tail
    return text[:head] + cut_marker(cut) + text[len(text) - tail :], True


def preview(text: str, lines: int = 12, width: int = 2_000) -> str:
    """The start of `text` for a folded display: at most `lines` lines and `width` characters."""
    kept = text[:width].splitlines()[:lines]
    short = "\n".join(kept)
    return short if len(short) >= len(text.rstrip("\n")) else short + "\n…"
