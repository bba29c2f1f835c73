"""The planner's reasons and warnings, in words a person can act on."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from gptoss_local.kinds import TRAITS
from gptoss_local.plan import batching, memory
from gptoss_local.plan.chosen import Plan
from gptoss_local.units import GIB, gib

if TYPE_CHECKING:
    from gptoss_local.catalog import Catalog, ModelSpec
    from gptoss_local.hardware.machine import Gpu, Hardware
    from gptoss_local.plan.memory import Placement


def speed_range(low: float, high: float) -> str:
    """'150–220', or 'about 400' when both ends are the same."""
    return f"about {low:g}" if low == high else f"{low:g}–{high:g}"


def describe_choice(
    plan: Plan,
    spec: ModelSpec,
    hardware: Hardware,
    gpus: tuple[Gpu, ...],
    notes: list[str],
    why_model: str,
    alternative: tuple[ModelSpec, Placement] | None,
) -> tuple[list[str], list[str]]:
    """Reasons for the plan, and warnings when it does not fit."""
    reasons = [_hardware_line(hardware, gpus), *notes, why_model]
    warnings: list[str] = []
    reasons.append(_placement_line(plan, spec, hardware))
    if plan.fits and plan.n_ubatch > batching.SMALLEST:
        reasons.append(_micro_batch_line(plan, spec))
    if plan.fits and plan.speed:
        reasons.append(
            f"Expected decode speed: {speed_range(plan.speed.low, plan.speed.high)} tokens/s "
            f"({plan.speed.basis})."
        )
    if not plan.fits:
        warnings.append(_shortfall_line(plan, spec))
    if alternative:
        other, where = alternative
        reasons.append(
            f"{other.name} would also run here with the experts of {where.cpu_moe_layers} of "
            f"{other.shape.layers} layers in system RAM (much slower): --model {other.aliases[0]}."
        )
    return reasons, warnings


def why_model(spec: ModelSpec, catalog: Catalog, explicit: bool) -> str:
    """Why this model: asked for, the largest that fits a big card, or the default."""
    if explicit:
        return f"{spec.name} was asked for."
    if spec.total_bytes > min(m.total_bytes for m in catalog.models):
        return (
            f"{spec.name} fits entirely on this workstation or data-centre GPU memory, "
            "so the larger model is chosen."
        )
    bigger = [m.name for m in catalog.models if m.total_bytes > spec.total_bytes]
    if not bigger:
        return f"{spec.name} is the model for this machine."
    return (
        f"{spec.name} is the default; {', '.join(bigger)} is chosen by itself only where a "
        "workstation or data-centre GPU holds it entirely."
    )


def backend_warnings(plan: Plan) -> list[str]:
    """What the chosen backend cannot do of the plan."""
    if plan.cpu_moe_layers and not TRAITS[plan.backend].experts_in_ram:
        return [
            "Ollama cannot keep only the experts in system RAM: it moves whole layers to the CPU, "
            "which is slower. The llama.cpp backend (--backend llamacpp) follows this plan exactly."
        ]
    return []


def disk_warnings(spec: ModelSpec, hardware: Hardware) -> list[str]:
    """Whether the model's download fits the disk."""
    if spec.total_bytes + GIB <= hardware.disk_free:
        return []
    return [
        f"Downloading {spec.name} needs {gib(spec.total_bytes)} of disk; only "
        f"{gib(hardware.disk_free)} is free at {hardware.disk_path}."
    ]


def left_out_line(gpu: Gpu) -> str:
    """A card too full to help."""
    return f"GPU {gpu.index} ({gpu.name}) has only {gib(gpu.free_vram)} free and is left out."


def effort_warnings(effort: str, context: int) -> list[str]:
    """Reasoning needs room: high effort in a small context loses track of the question."""
    if effort == "high" and context < 16_384:
        return [
            f"High reasoning effort can fill a {context:,}-token context quickly; "
            "use 16,384 or more."
        ]
    if effort == "medium" and context < 8_192:
        return [
            f"A {context:,}-token context is tight for medium reasoning effort; use 8,192 or more."
        ]
    return []


def _hardware_line(hardware: Hardware, gpus: tuple[Gpu, ...]) -> str:
    ram = f"{gib(hardware.ram_available)} of {gib(hardware.ram_total)} RAM available"
    if not hardware.gpus:
        why = f" ({hardware.nvml_error})" if hardware.nvml_error else ""
        return f"No NVIDIA GPU found{why}; {ram}."
    if not gpus:
        return f"No GPU has enough free memory to help; {ram}."
    names = Counter(g.name for g in gpus)
    cards = ", ".join(f"{n}× {name}" if n > 1 else name for name, n in names.items())
    free = sum(g.free_vram for g in gpus)
    total = sum(g.total_vram for g in gpus)
    split = " (llama.cpp splits the layers across them)" if len(gpus) > 1 else ""
    return f"Found {cards}{split}: {gib(free)} of {gib(total)} VRAM free; {ram}."


def _placement_line(plan: Plan, spec: ModelSpec, hardware: Hardware) -> str:
    context = f"a {plan.context:,}-token context"
    if plan.placement == "gpu":
        return (
            f"{spec.name} runs entirely on the GPU with {context}: about {gib(plan.est_vram)} of "
            f"VRAM of {gib(plan.vram_budget)} usable (free VRAM less a safety margin)."
        )
    if plan.placement == "gpu+ram":
        moved = plan.cpu_moe_layers * spec.shape.expert_layer_bytes
        return (
            f"{spec.name} does not fit entirely in VRAM, so the experts of {plan.cpu_moe_layers} "
            f"of {spec.shape.layers} layers ({gib(moved)}) stay in system RAM with {context}: "
            f"about {gib(plan.est_vram)} VRAM and {gib(plan.est_ram)} RAM. The rest stays on the "
            "GPU; decode is slower than fully on the GPU."
        )
    if plan.placement == "cpu":
        return (
            f"{spec.name} runs on the CPU from system RAM with {context}: about "
            f"{gib(plan.est_ram)} of {gib(plan.ram_budget)} usable RAM. Expect slow replies."
        )
    return f"Nothing fits on this machine with {context}."


def _micro_batch_line(plan: Plan, spec: ModelSpec) -> str:
    experts_on_gpu = plan.cpu_moe_layers < spec.shape.layers
    extra = memory.compute_buffer_bytes(spec, plan.n_ubatch, experts_on_gpu)
    extra -= memory.compute_buffer_bytes(spec, batching.SMALLEST, experts_on_gpu)
    gain = "several times faster with experts in RAM" if plan.cpu_moe_layers else "faster"
    return (
        f"Prompts are read {plan.n_ubatch:,} tokens at a time ({gain} than "
        f"{batching.SMALLEST}), for about {gib(extra)} more VRAM."
    )


def _shortfall_line(plan: Plan, spec: ModelSpec) -> str:
    lead = f"{spec.name} will not fit" if plan.model else "No model fits"
    parts = []
    if plan.est_vram > plan.vram_budget:
        parts.append(f"{gib(plan.est_vram)} VRAM (usable: {gib(plan.vram_budget)})")
    if plan.est_ram > plan.ram_budget:
        parts.append(f"{gib(plan.est_ram)} RAM (usable: {gib(plan.ram_budget)})")
    need = " and ".join(parts) or "more memory than is free"
    fix = "close other programs, choose a smaller context, or use a machine with more memory"
    return f"{lead}: the least demanding placement of {spec.name} needs {need}; {fix}."
