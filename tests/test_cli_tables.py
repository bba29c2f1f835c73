"""The CLI's tables line up in cells, with Chinese titles and headings (two cells a character)."""

from __future__ import annotations

from rich.cells import cell_len

from gptoss_local.commands.table import cut, table_lines


def test_columns_line_up_in_cells_with_wide_characters() -> None:
    rows = [("编号", "标题", "模型"), ("1", "天气怎么样", "gpt-oss-20b"), ("12", "hello", "-")]
    lines = table_lines(rows)
    third = [line.index(row[2]) for line, row in zip(lines, rows, strict=True)]
    starts = {cell_len(line[:at]) for line, at in zip(lines, third, strict=True)}
    assert len(starts) == 1  # the last column starts at the same cell on every line


def test_a_long_title_is_cut_to_its_cells() -> None:
    title = cut("一个很长很长很长的聊天标题", 10)
    assert cell_len(title) <= 10 and title.endswith("…")
    assert cut("short", 10) == "short"
