"""The status bar's layout, without an app: one full line where it fits, else the short forms on
two lines, and the least important facts left out only where even those do not fit."""

from __future__ import annotations

from gptoss_local.tui.status import Fact, lines

FACTS = [
    Fact("gpt-oss-20b", "gpt-oss-20b", 9),
    Fact("context 7,900/131,072", "context 6 %", 8),
    Fact("TTFT 0.12s", "TTFT 0.12s", 1),
    Fact("250 tok/s", "250 tok/s", 3),
    Fact("effort medium", "effort medium", 7),
    Fact("GPU, experts of 12 layers in RAM", "GPU, experts of 12 layers in RAM", 6),
    Fact("VRAM 13.5/24.0 GiB", "VRAM 13.5/24.0 GiB", 4),
    Fact("llamacpp", "llamacpp", 5),
]


def test_a_wide_bar_is_one_line_of_the_full_forms() -> None:
    (line,) = lines(FACTS, 200)
    assert line.startswith("gpt-oss-20b  ·  context 7,900/131,072  ·  TTFT")
    assert lines(FACTS, 0) == [line]  # not laid out yet: as wide as it takes


def test_78_cells_hold_every_fact_on_two_lines() -> None:
    shown = lines(FACTS, 78)
    assert shown == [
        "gpt-oss-20b · context 6 % · TTFT 0.12s · 250 tok/s · effort medium",
        "GPU, experts of 12 layers in RAM · VRAM 13.5/24.0 GiB · llamacpp",
    ]


def test_a_narrower_bar_leaves_out_the_least_important_first() -> None:
    shown = lines(FACTS, 50)
    assert len(shown) == 2 and all(len(line) <= 50 for line in shown)
    kept = " · ".join(shown).split(" · ")
    assert "TTFT 0.12s" not in kept and "250 tok/s" not in kept
    assert kept[:2] == ["gpt-oss-20b", "context 6 %"] and "effort medium" in kept
    assert lines(FACTS, 8) == ["gpt-oss-20b", "context 6 %"]  # the last two, cut when drawn


def test_two_cards_vram_fits_80_columns_in_the_short_form() -> None:
    two = [
        *FACTS[:5],
        Fact("2 GPUs, experts of 13 layers in RAM", "2 GPUs, experts of 13 layers in RAM", 6),
        Fact("VRAM 21.3/24.0 + 11.0/12.0 GiB", "VRAM 21/24+11/12 GiB", 4),
        FACTS[-1],
    ]
    shown = lines(two, 78)  # 80 columns less the bar's padding
    assert shown == [
        "gpt-oss-20b · context 6 % · TTFT 0.12s · 250 tok/s · effort medium",
        "2 GPUs, experts of 13 layers in RAM · VRAM 21/24+11/12 GiB · llamacpp",
    ]
    assert "VRAM 21.3/24.0 + 11.0/12.0 GiB" in lines(two, 200)[0]
