"""Real cards for planner tests: NVML names, brands, total and typical free VRAM (MiB)."""

from __future__ import annotations

from fake_nvml import FakeCard

GEFORCE, QUADRO_RTX, NVIDIA_RTX, TESLA = 5, 12, 13, 2

CARDS = {
    "3060": FakeCard("NVIDIA GeForce RTX 3060", 12_288, 11_500, capability=(8, 6)),
    "3080": FakeCard("NVIDIA GeForce RTX 3080", 10_240, 9_600, capability=(8, 6)),
    "4060": FakeCard("NVIDIA GeForce RTX 4060", 8_188, 7_500),
    "4060ti16": FakeCard("NVIDIA GeForce RTX 4060 Ti", 16_380, 15_600),
    "4070tis": FakeCard("NVIDIA GeForce RTX 4070 Ti SUPER", 16_376, 15_500),
    "4080": FakeCard("NVIDIA GeForce RTX 4080", 16_376, 15_300),
    "4090": FakeCard("NVIDIA GeForce RTX 4090", 24_564, 23_400),
    "5080": FakeCard("NVIDIA GeForce RTX 5080", 16_303, 15_200, capability=(12, 0)),
    "5090": FakeCard("NVIDIA GeForce RTX 5090", 32_607, 31_300, capability=(12, 0)),
    "a6000": FakeCard("NVIDIA RTX A6000", 49_140, 48_300, brand=QUADRO_RTX, capability=(8, 6)),
    "6000ada": FakeCard("NVIDIA RTX 6000 Ada Generation", 49_140, 48_200, brand=NVIDIA_RTX),
    "pro6000": FakeCard(
        "NVIDIA RTX PRO 6000 Blackwell Workstation Edition", 97_887, 96_900, brand=NVIDIA_RTX,
        capability=(12, 0),
    ),
    "h200": FakeCard("NVIDIA H200", 143_771, 143_200, brand=TESLA, capability=(9, 0)),
    "gt1030": FakeCard("NVIDIA GeForce GT 1030", 2_048, 1_800, capability=(6, 1)),
}  # fmt: skip


def card(key: str, free_mib: int | None = None) -> FakeCard:
    """A copy of a known card, optionally with other free VRAM."""
    base = CARDS[key]
    return FakeCard(
        base.name, base.total_mib, free_mib or base.free_mib, base.brand, base.capability
    )
