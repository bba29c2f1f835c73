"""The planner's answer: what to load and how, with the reasons in words. A leaf of `plan`, so
the planner, its wording and everything that shows a plan can all import it."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from gptoss_local.kinds import BackendName
from gptoss_local.plan.speed import SpeedRange


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

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON output."""
        return asdict(self)
