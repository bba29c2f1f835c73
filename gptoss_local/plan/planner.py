"""The fit planner: hardware + catalog + wishes → a `Plan` saying what to run, where, and why.

Policy, in order: a workstation or data-centre card with the memory for gpt-oss-120b fully on
the GPU gets 120b; otherwise gpt-oss-20b, fully on the GPU at the largest context that fits, else
with the experts of some layers kept in system RAM, else on the CPU. An explicit choice of the
user always wins, with a warning when it will not fit. Budgets are free VRAM (not total) less a
margin, and available RAM less a reserve for the rest of the system.
"""

from __future__ import annotations

from dataclasses import replace

from gptoss_local.catalog import Catalog, ModelSpec
from gptoss_local.hardware.machine import Gpu, Hardware
from gptoss_local.plan import batching, memory
from gptoss_local.plan.chosen import Plan
from gptoss_local.plan.drafting import head_vram
from gptoss_local.plan.memory import Estimate, Placement
from gptoss_local.plan.speed import decode_speed
from gptoss_local.plan.text import (
    backend_warnings,
    context_cut_warning,
    describe_choice,
    disk_warnings,
    effort_warnings,
    left_out_line,
    min_context_line,
    min_context_warning,
    why_model,
)
from gptoss_local.plan.wishes import Wishes
from gptoss_local.units import GIB, MIB

CONTEXT_LADDER = (131_072, 98_304, 65_536, 49_152, 32_768, 24_576, 16_384)
DEFAULT_CONTEXT_FLOOR = 16_384  # below this, medium/high reasoning runs out of room
MIN_CONTEXT = 2_048
MIN_USEFUL_GPU_BYTES = 2 * GIB  # a card with less free than this cannot hold even the attention
BIG_MODEL_CLASSES = ("workstation", "datacenter")


def vram_margin(gpu: Gpu) -> int:
    """VRAM left unplanned on each card: the desktop and other programs move around."""
    return max(512 * MIB, int(gpu.total_vram * 0.04))


def ram_reserve(hardware: Hardware) -> int:
    """RAM left to the operating system and other programs."""
    return max(int(1.5 * GIB), int(hardware.ram_total * 0.08))


def plan(
    hardware: Hardware,
    catalog: Catalog,
    wishes: Wishes | None = None,
    spec: ModelSpec | None = None,
) -> Plan:
    """Choose model and placement. Raises KeyError only for an unknown model name.

    `spec` plans a given model (a file the user pointed at) instead of a manifest entry.
    """
    wishes = wishes or Wishes()
    gpus, notes = _usable_gpus(hardware)
    # An EAGLE-3 head asked for sits beside the model on the GPU.
    vram_budget = sum(g.free_vram - vram_margin(g) for g in gpus) - (
        head_vram(wishes) if gpus else 0
    )
    ram_budget = max(hardware.ram_available - ram_reserve(hardware), 0)
    explicit = spec is not None or wishes.model not in (None, "", "auto")
    if spec is None:
        named = wishes.model if explicit else None
        spec = catalog.model(named) if named else _default_model(catalog, gpus, vram_budget, wishes)
    bandwidth = _slowest_bandwidth(gpus, catalog)
    chosen = _place(spec, len(gpus), vram_budget, ram_budget, wishes, gpu_bandwidth_gbs=bandwidth)
    short_of: int | None = None  # the least context asked for, when it does not fit
    if chosen is None and _wants_floor(wishes):
        short_of, wishes = wishes.min_context, replace(wishes, min_context=None)
        chosen = _place(spec, len(gpus), vram_budget, ram_budget, wishes,
                        gpu_bandwidth_gbs=bandwidth)  # fmt: skip
    fits = chosen is not None
    if chosen is None:
        chosen = _closest(spec, len(gpus), wishes)
    placement, est = chosen
    used = gpus if placement.gpu_count else ()
    base = Plan(
        model=spec.name if fits or explicit else None,
        backend=wishes.backend,
        placement=_placement_name(placement, fits or explicit),
        gpu_indices=tuple(g.index for g in used),
        gpu_layers=-1 if used else 0,
        cpu_moe_layers=placement.cpu_moe_layers if used else 0,
        context=placement.context,
        kv_type=placement.kv_type,
        flash_attn=bool(used),
        n_batch=max(2048, placement.n_ubatch),  # llama.cpp caps the micro-batch at the batch
        n_ubatch=placement.n_ubatch,
        est_vram=est.vram,
        est_ram=est.ram,
        vram_budget=vram_budget,
        ram_budget=ram_budget,
        speed=decode_speed(spec, catalog, tuple(used), placement.cpu_moe_layers) if fits else None,
        fits=fits,
        reasons=(),
        warnings=(),
    )
    alternative = _bigger_alternative(catalog, spec, len(gpus), vram_budget, ram_budget, explicit)
    why = why_model(spec, catalog, explicit)
    reasons, warnings = describe_choice(base, spec, hardware, gpus, notes, why, alternative)
    if fits and _wants_floor(wishes):
        reasons.append(min_context_line(wishes.min_context or 0))
    if fits and short_of:
        warnings.append(min_context_warning(short_of, base.context))
    if wishes.context and wishes.context != base.context:
        warnings.append(
            context_cut_warning(spec.name, wishes.context, base.context, spec.shape.context_max)
        )
    warnings += effort_warnings(wishes.effort, base.context, spec.shape.context_max)
    warnings += backend_warnings(base)
    warnings += disk_warnings(spec, hardware)
    return replace(base, reasons=tuple(reasons), warnings=tuple(warnings))


def _slowest_bandwidth(gpus: tuple[Gpu, ...], catalog: Catalog) -> float | None:
    """The slowest card's memory bandwidth in GB/s, from NVML or the catalog; None if unknown."""
    found = []
    for gpu in gpus:
        known = catalog.known_gpu(gpu.name)
        found.append(gpu.memory_bandwidth_gbs or (known.bandwidth_gbs if known else None))
    return None if not found or None in found else min(b for b in found if b is not None)


def _usable_gpus(hardware: Hardware) -> tuple[tuple[Gpu, ...], list[str]]:
    usable, notes = [], []
    for gpu in hardware.gpus:
        if gpu.free_vram - vram_margin(gpu) < MIN_USEFUL_GPU_BYTES:
            notes.append(left_out_line(gpu))
        else:
            usable.append(gpu)
    return tuple(usable), notes


def _default_model(
    catalog: Catalog, gpus: tuple[Gpu, ...], vram_budget: int, wishes: Wishes
) -> ModelSpec:
    """The smallest model, or the largest one that fits entirely on a workstation-class GPU."""
    by_size = sorted(catalog.models, key=lambda m: m.total_bytes)
    if any(g.gpu_class in BIG_MODEL_CLASSES for g in gpus):
        for spec in reversed(by_size[1:]):
            full = replace(wishes, cpu_moe_layers=0)
            if _place(spec, len(gpus), vram_budget, None, full, floor_only=True) is not None:
                return spec
    return by_size[0]


def _wants_floor(wishes: Wishes) -> bool:
    """Whether the caller asked for a least context (and no exact one)."""
    return not wishes.context and bool(wishes.min_context)


def _contexts(spec: ModelSpec, wishes: Wishes) -> tuple[int, ...]:
    """The contexts to try, largest first: the wished one (within what the model holds and
    the least that works; `plan` warns when it is cut), else the ladder (from the least the
    caller needs)."""
    trained = spec.shape.context_max
    if wishes.context:
        return (max(min(wishes.context, trained), min(MIN_CONTEXT, trained)),)
    least = min(wishes.min_context or 0, trained)
    return tuple(c for c in CONTEXT_LADDER if least <= c <= trained) or (trained,)


def _floor_context(wishes: Wishes, contexts: tuple[int, ...]) -> int:
    """The context of plans that keep experts in RAM or run on the CPU: the wished one, else
    the default floor (or the caller's least, if larger) where the model allows it."""
    if wishes.context:
        return contexts[0]
    return min(max(DEFAULT_CONTEXT_FLOOR, wishes.min_context or 0), contexts[-1])


def _place(
    spec: ModelSpec,
    gpu_count: int,
    vram_budget: int,
    ram_budget: int | None,
    wishes: Wishes,
    floor_only: bool = False,
    gpu_bandwidth_gbs: float | None = None,
) -> tuple[Placement, Estimate] | None:
    """The best placement that fits both budgets (RAM unchecked when `ram_budget` is None).

    Preference: everything on the GPU at the largest context; then the fewest layers' experts in
    RAM at the wished or floor context; then the CPU alone. The micro-batch is widened after
    (`batching.widest`).
    """
    contexts = _contexts(spec, wishes)[-1:] if floor_only else _contexts(spec, wishes)
    small_context = _floor_context(wishes, contexts)

    def fits(placement: Placement) -> Estimate | None:
        est = memory.estimate(spec, placement)
        ok = est.vram <= vram_budget and (ram_budget is None or est.ram <= ram_budget)
        return est if ok else None

    def first(candidates: list[tuple[int, int, int]]) -> tuple[Placement, Estimate] | None:
        for gpus, layers, context in candidates:
            placement = Placement(gpus, layers, context, wishes.kv_type, batching.SMALLEST)
            est = fits(placement)
            if est is not None:
                return placement, est
        return None

    if gpu_count and wishes.cpu_moe_layers is not None:
        hit = first([(gpu_count, wishes.cpu_moe_layers, c) for c in contexts])
    elif gpu_count:
        candidates = [(gpu_count, 0, c) for c in contexts]
        candidates += [(gpu_count, n, small_context) for n in range(1, spec.shape.layers + 1)]
        hit = first(candidates)
    else:
        hit = None
    if hit:
        fixed = wishes.cpu_moe_layers is not None
        return batching.widest(spec, hit, fits, gpu_bandwidth_gbs, layers_fixed=fixed)
    if gpu_count and wishes.cpu_moe_layers is not None:
        return None
    return first([(0, 0, small_context)])


def _closest(spec: ModelSpec, gpu_count: int, wishes: Wishes) -> tuple[Placement, Estimate]:
    """The least demanding placement, to say how far off a plan that does not fit is."""
    context = _floor_context(wishes, _contexts(spec, wishes))
    layers = spec.shape.layers if wishes.cpu_moe_layers is None else wishes.cpu_moe_layers
    placement = Placement(gpu_count, layers if gpu_count else 0, context, wishes.kv_type)
    return placement, memory.estimate(spec, placement)


def _placement_name(placement: Placement, has_model: bool) -> str:
    if not has_model:
        return "none"
    if placement.gpu_count == 0:
        return "cpu"
    return "gpu+ram" if placement.cpu_moe_layers else "gpu"


def _bigger_alternative(
    catalog: Catalog,
    spec: ModelSpec,
    gpu_count: int,
    vram_budget: int,
    ram_budget: int,
    explicit: bool,
) -> tuple[ModelSpec, Placement] | None:
    """A larger model that would also run here (with experts in RAM), worth a mention."""
    if explicit:
        return None
    for other in sorted(catalog.models, key=lambda m: m.total_bytes, reverse=True):
        if other.total_bytes <= spec.total_bytes:
            break
        hit = _place(other, gpu_count, vram_budget, ram_budget, Wishes())
        if hit and hit[0].gpu_count:
            return other, hit[0]
    return None
