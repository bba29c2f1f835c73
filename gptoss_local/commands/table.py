"""Columns for the terminal, measured in cells: a CJK character takes two, so `len()` would
misalign a translated heading or a Chinese chat title."""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len, set_cell_size


def cut(text: str, cells: int) -> str:
    """`text`, shortened with "…" to fit `cells` cells."""
    return text if cell_len(text) <= cells else set_cell_size(text, cells - 1).rstrip() + "…"


def table_lines(rows: Sequence[Sequence[str]]) -> list[str]:
    """The rows as lines, every column but the last padded to its widest cell."""
    widths = [max(cell_len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    lines = []
    for row in rows:
        padded = zip(row[:-1], widths, strict=True)
        cells = [cell + " " * (width - cell_len(cell)) for cell, width in padded]
        lines.append("  ".join([*cells, row[-1]]))
    return lines
