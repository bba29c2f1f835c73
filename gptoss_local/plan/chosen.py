"""The planner's answer: what to load and how, with the reasons in words. A leaf of `plan`, so
the planner, its wording and everything that shows a plan can all import it."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from gptoss_local.kinds import BackendName
from gptoss_local.plan.speed import SpeedRange


@dataclass(frozen=True)
class CardShare:
    """One card's part of a plan. Memory in bytes; layers count from 0.

    Attributes:
        index: NVML's index of the card (as `doctor` and nvidia-smi number them).
        name: NVML's name of the card.
        pci_bus_id: Where the card sits ("00000000:01:00.0"), how the engine finds it among
            llama.cpp's devices; None when NVML did not say.
        first_layer: The first of its run of layers.
        layers: How many layers it holds (0: only the output layer).
        output: Whether it holds the output layer (the last card does).
        experts_in_ram: How many of its layers keep their experts in system RAM.
        est_vram: What it is expected to hold, its context filled.
        usable: Its free VRAM less the safety margin: what the plan may use of it.
        free: Its free VRAM when the plan was made.
    """

    index: int
    name: str
    pci_bus_id: str | None
    first_layer: int
    layers: int
    output: bool
    experts_in_ram: int
    est_vram: int
    usable: int
    free: int


@dataclass(frozen=True)
class LeftOut:
    """A card the plan does not use, and why (in words)."""

    index: int
    name: str
    reason: str


@dataclass(frozen=True)
class Plan:
    """What to load and how. Memory in bytes; `vram_budget` is what the plan may use."""

    model: str | None
    backend: BackendName
    placement: str  # "gpu", "gpu+ram" (experts in RAM), "cpu", or "none" (nothing fits)
    gpu_indices: tuple[int, ...]
    gpu_layers: int  # -1: every layer on the GPU(s); 0: none
    cpu_moe_layers: int
    context: int
    kv_type: str
    flash_attn: bool
    n_batch: int
    n_ubatch: int
    est_vram: int
    est_ram: int
    vram_budget: int
    ram_budget: int
    speed: SpeedRange | None
    fits: bool
    reasons: tuple[str, ...]
    warnings: tuple[str, ...]
    # Several cards: llama.cpp's tensor_split (slots per card, in `gpu_indices` order: the
    # layers, then the output layer); empty with one card or none.
    tensor_split: tuple[int, ...] = ()
    cards: tuple[CardShare, ...] = ()  # each card used, in `gpu_indices` order
    left_out: tuple[LeftOut, ...] = ()  # the cards found but not used

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON output."""
        return asdict(self)
