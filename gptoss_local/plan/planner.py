"""The fit planner: hardware + catalog + wishes → a `Plan` saying what to run, where, and why.

Policy, in order: a workstation or data-centre card with the memory for gpt-oss-120b fully on
the GPU gets 120b; otherwise gpt-oss-20b, fully on the GPU at the largest context that fits, else
with the experts of some layers kept in system RAM, else on the CPU. An explicit choice of the
user always wins, with a warning when it will not fit. Budgets are free VRAM (not total) less a
margin, and available RAM less a reserve for the rest of the system.

Several cards: each card has its own budget, and a placement fits only when every card's share
fits its own (`plan.split` shares the layers; llama.cpp's layer split places them so). The
cards are the ones asked for (`--gpus`), else those that help: a set of fewer cards (the
largest ones) is taken when it plans as well as all of them, since every card boundary is a
hop per token (Ollama, too, keeps a model on one card when it fits there).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from gptoss_local.catalog import Catalog, ModelSpec
from gptoss_local.hardware.machine import Gpu, Hardware
from gptoss_local.plan import batching, memory, split
from gptoss_local.plan.chosen import CardShare, LeftOut, Plan
from gptoss_local.plan.drafting import head_vram
from gptoss_local.plan.memory import Estimate, Placement
from gptoss_local.plan.speed import decode_speed
from gptoss_local.plan.text import (
    backend_warnings,
    context_cut_warning,
    describe_choice,
    disk_warnings,
    effort_warnings,
    hidden_line,
    left_out_line,
    min_context_line,
    min_context_warning,
    missing_gpu_warning,
    not_asked_line,
    not_needed_line,
    too_small_line,
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
    gpus, left_out = _usable_gpus(hardware, wishes)
    # An EAGLE-3 head asked for sits beside the model on the first card.
    if gpus and head_vram(wishes):
        first = replace(gpus[0], free_vram=gpus[0].free_vram - head_vram(wishes))
        gpus = (first, *gpus[1:])
    ram_budget = max(hardware.ram_available - ram_reserve(hardware), 0)
    explicit = spec is not None or wishes.model not in (None, "", "auto")
    if spec is None:
        named = wishes.model if explicit else None
        spec = catalog.model(named) if named else _default_model(catalog, gpus, wishes)
    used, hit, short_of, wishes = _choose_cards(spec, catalog, gpus, ram_budget, wishes)
    fits = hit is not None
    placement, est = hit if hit is not None else _closest(spec, _budgets(used), wishes)
    if not placement.gpu_count:
        used = ()
    left_out += _unused(spec, placement, gpus, used, wishes)
    vram_budget = sum(_budgets(used)) if used else sum(_budgets(gpus))
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
        tensor_split=est.split if len(used) > 1 else (),
        cards=_shares(used, placement, est),
        left_out=tuple(left_out),
    )
    alternative = _bigger_alternative(catalog, spec, gpus, ram_budget, explicit)
    why = why_model(spec, catalog, explicit)
    notes = [item.reason for item in left_out]
    reasons, warnings = describe_choice(base, spec, hardware, gpus, notes, why, alternative)
    if fits and _wants_floor(wishes):
        reasons.append(min_context_line(wishes.min_context or 0))
    if fits and short_of:
        warnings.append(min_context_warning(short_of, base.context))
    if wishes.context and wishes.context != base.context:
        warnings.append(
            context_cut_warning(spec.name, wishes.context, base.context, spec.shape.context_max)
        )
    warnings += missing_gpu_warning(wishes.gpus, hardware)
    warnings += effort_warnings(wishes.effort, base.context, spec.shape.context_max)
    warnings += backend_warnings(base, asked_gpus=wishes.gpus is not None)
    warnings += disk_warnings(spec, hardware)
    return replace(base, reasons=tuple(reasons), warnings=tuple(warnings))


Hit = tuple[Placement, Estimate]
Check = Callable[[Placement], Estimate | None]


def _choose_cards(
    spec: ModelSpec,
    catalog: Catalog,
    gpus: tuple[Gpu, ...],
    ram_budget: int,
    wishes: Wishes,
) -> tuple[tuple[Gpu, ...], Hit | None, int | None, Wishes]:
    """The cards to use and the placement on them: the cards asked for, else the fewest of
    the largest cards that plan as well as all of them. Also the least context asked for when
    it did not fit (then planned without it), and the wishes planned with."""
    short_of: int | None = None
    if _wants_floor(wishes) and _best(spec, catalog, gpus, ram_budget, wishes)[1] is None:
        short_of, wishes = wishes.min_context, replace(wishes, min_context=None)
    used, hit = _best(spec, catalog, gpus, ram_budget, wishes)
    return used, hit, short_of, wishes


def _best(
    spec: ModelSpec,
    catalog: Catalog,
    gpus: tuple[Gpu, ...],
    ram_budget: int,
    wishes: Wishes,
) -> tuple[tuple[Gpu, ...], Hit | None]:
    """The best placement over the candidate sets of cards, fewer cards winning a tie."""
    best: tuple[tuple[Gpu, ...], Hit | None] = (gpus, None)
    best_rank: tuple[int, ...] | None = None
    for cards in _card_sets(gpus, wishes):
        bandwidth = _slowest_bandwidth(cards, catalog)
        hit = _place(spec, _budgets(cards), ram_budget, wishes, gpu_bandwidth_gbs=bandwidth)
        if hit is None:
            continue
        rank = (*_rank(hit[0]), -len(cards))
        if best_rank is None or rank > best_rank:
            best, best_rank = (cards, hit), rank
    return best


def _card_sets(gpus: tuple[Gpu, ...], wishes: Wishes) -> list[tuple[Gpu, ...]]:
    """Sets of cards worth planning: all of them; unless the user named the cards, also the
    largest one, the two largest, … (each in NVML's order, as llama.cpp would number them)."""
    sets = [gpus]
    if wishes.gpus is None:
        by_room = sorted(gpus, key=lambda g: g.free_vram - vram_margin(g), reverse=True)
        for count in range(1, len(gpus)):
            chosen = {g.index for g in by_room[:count]}
            sets.append(tuple(g for g in gpus if g.index in chosen))
    return sets


def _rank(placement: Placement) -> tuple[int, ...]:
    """How good a placement is, larger being better, as `_place` prefers: on a GPU; then
    everything there, at the largest context; then the fewest layers' experts in RAM."""
    whole = placement.gpu_count > 0 and placement.cpu_moe_layers == 0
    return (
        int(placement.gpu_count > 0),
        int(whole),
        placement.context if whole else 0,
        -placement.cpu_moe_layers,
        placement.context,
        placement.n_ubatch,
    )


def _budgets(gpus: tuple[Gpu, ...]) -> tuple[int, ...]:
    """Each card's usable VRAM: free less its margin."""
    return tuple(g.free_vram - vram_margin(g) for g in gpus)


def _shares(used: tuple[Gpu, ...], placement: Placement, est: Estimate) -> tuple[CardShare, ...]:
    """Each card's run of layers and bytes, from the estimate's split."""
    shares, start = [], 0
    layers_total = sum(est.split) - 1
    for gpu, slots, vram in zip(used, est.split, est.cards, strict=False):
        end = min(start + slots, layers_total)
        layers = max(end - start, 0)
        moved = max(min(placement.cpu_moe_layers, end) - start, 0)
        shares.append(
            CardShare(
                index=gpu.index,
                name=gpu.name,
                pci_bus_id=gpu.pci_bus_id,
                first_layer=start,
                layers=layers,
                output=start + slots > layers_total,
                experts_in_ram=moved,
                est_vram=vram,
                usable=gpu.free_vram - vram_margin(gpu),
                free=gpu.free_vram,
            )
        )
        start += slots
    return tuple(shares)


def _slowest_bandwidth(gpus: tuple[Gpu, ...], catalog: Catalog) -> float | None:
    """The slowest card's memory bandwidth in GB/s, from NVML or the catalog; None if unknown."""
    found = []
    for gpu in gpus:
        known = catalog.known_gpu(gpu.name)
        found.append(gpu.memory_bandwidth_gbs or (known.bandwidth_gbs if known else None))
    return None if not found or None in found else min(b for b in found if b is not None)


def _usable_gpus(hardware: Hardware, wishes: Wishes) -> tuple[tuple[Gpu, ...], list[LeftOut]]:
    """The cards that may take part (those asked for, in the order asked), and the others
    with why they are left out."""
    usable: list[Gpu] = []
    left_out = []
    by_index = {gpu.index: gpu for gpu in hardware.gpus}
    asked = wishes.gpus
    order = [by_index[i] for i in asked if i in by_index] if asked is not None else []
    for gpu in hardware.gpus:
        if asked is not None and gpu.index not in asked:
            left_out.append(LeftOut(gpu.index, gpu.name, not_asked_line(gpu, asked)))
    for gpu in order if asked is not None else list(hardware.gpus):
        if not gpu.cuda_visible:
            left_out.append(LeftOut(gpu.index, gpu.name, hidden_line(gpu)))
        elif gpu.free_vram - vram_margin(gpu) < MIN_USEFUL_GPU_BYTES:
            left_out.append(LeftOut(gpu.index, gpu.name, left_out_line(gpu)))
        else:
            usable.append(gpu)
    return tuple(usable), left_out


def _unused(
    spec: ModelSpec,
    placement: Placement,
    gpus: tuple[Gpu, ...],
    used: tuple[Gpu, ...],
    wishes: Wishes,
) -> list[LeftOut]:
    """The usable cards the plan does without, and why: too small to hold their own buffers
    and one layer, else not needed."""
    taken = {g.index for g in used}
    if not taken:  # on the CPU: the placement's reason says why
        return []
    loads = memory.CardLoads(spec, replace(placement, gpu_count=3, split=()))
    layers = spec.shape.layers
    # The least a card after the first could take: the output layer alone, or one layer
    # that keeps its experts (the RAM-kept ones are the first card's).
    output_alone = loads.card(2, layers, layers + 1, 3)
    one_layer = loads.card(1, layers - 1, layers, 3)
    least = min(output_alone, one_layer)
    left_out = []
    for gpu in gpus:
        if gpu.index in taken:
            continue
        usable = gpu.free_vram - vram_margin(gpu)
        reason = (
            too_small_line(gpu, usable, least)
            if usable < least
            else not_needed_line(gpu, spec.name)
        )
        left_out.append(LeftOut(gpu.index, gpu.name, reason))
    return left_out


def _default_model(catalog: Catalog, gpus: tuple[Gpu, ...], wishes: Wishes) -> ModelSpec:
    """The smallest model, or the largest one that fits entirely on a workstation-class GPU."""
    by_size = sorted(catalog.models, key=lambda m: m.total_bytes)
    if any(g.gpu_class in BIG_MODEL_CLASSES for g in gpus):
        for spec in reversed(by_size[1:]):
            full = replace(wishes, cpu_moe_layers=0)
            if _place(spec, _budgets(gpus), None, full, floor_only=True) is not None:
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
    budgets: tuple[int, ...],
    ram_budget: int | None,
    wishes: Wishes,
    floor_only: bool = False,
    gpu_bandwidth_gbs: float | None = None,
) -> Hit | None:
    """The best placement that fits every card's budget and RAM (RAM unchecked when
    `ram_budget` is None); `budgets` holds each card's usable VRAM (none: the CPU).

    Preference: everything on the GPUs at the largest context; then the fewest layers' experts
    in RAM at the wished or floor context; then the CPU alone. The micro-batch is widened after
    (`batching.widest`).
    """
    contexts = _contexts(spec, wishes)[-1:] if floor_only else _contexts(spec, wishes)
    small_context = _floor_context(wishes, contexts)
    gpu_count = len(budgets)
    fits = _fits(spec, budgets, ram_budget)
    cards_fit = _fits(spec, budgets, None)  # RAM unchecked

    def at(layers: int, context: int, check: Check = fits, count: int = gpu_count) -> Hit | None:
        placement = Placement(count, layers, context, wishes.kv_type, batching.SMALLEST)
        est = check(placement)
        return (placement, est) if est is not None else None

    hit: Hit | None = None
    if gpu_count and wishes.cpu_moe_layers is not None:
        hit = next((h for c in contexts if (h := at(wishes.cpu_moe_layers, c))), None)
    elif gpu_count:
        hit = next((h for c in contexts if (h := at(0, c))), None)
        if hit is None:
            fewest = _fewest_layers(spec, lambda n: at(n, small_context, cards_fit) is not None)
            hit = at(fewest, small_context) if fewest is not None else None
    if hit:
        fixed = wishes.cpu_moe_layers is not None
        return batching.widest(spec, hit, fits, gpu_bandwidth_gbs, layers_fixed=fixed)
    if gpu_count and wishes.cpu_moe_layers is not None:
        return None
    return at(0, small_context, count=0)


def _fewest_layers(spec: ModelSpec, cards_fit: Callable[[int], bool]) -> int | None:
    """The fewest layers (1 or more) whose experts kept in RAM let every card's share fit.

    A card's share only shrinks as more layers' experts move to RAM (and RAM use only grows,
    so if RAM does not hold the fewest, it holds no more either): found by halving.
    """
    low, high = 1, spec.shape.layers
    if not cards_fit(high):
        return None
    while low < high:
        middle = (low + high) // 2
        if cards_fit(middle):
            high = middle
        else:
            low = middle + 1
    return low


def _fits(spec: ModelSpec, budgets: tuple[int, ...], ram_budget: int | None) -> Check:
    """The check of a placement: its estimate when every card's share and the RAM fit, with
    the layers shared among several cards by `split.best_split`."""

    def fits(placement: Placement) -> Estimate | None:
        if placement.gpu_count > 1:
            placement = replace(placement, split=split.best_split(spec, placement, budgets))
        est = memory.estimate(spec, placement)
        cards_ok = all(need <= budget for need, budget in zip(est.cards, budgets, strict=False))
        ok = cards_ok and (ram_budget is None or est.ram <= ram_budget)
        return est if ok else None

    return fits


def _closest(spec: ModelSpec, budgets: tuple[int, ...], wishes: Wishes) -> Hit:
    """The least demanding placement, to say how far off a plan that does not fit is."""
    context = _floor_context(wishes, _contexts(spec, wishes))
    gpu_count = len(budgets)
    layers = spec.shape.layers if wishes.cpu_moe_layers is None else wishes.cpu_moe_layers
    placement = Placement(gpu_count, layers if gpu_count else 0, context, wishes.kv_type)
    if gpu_count > 1:
        placement = replace(placement, split=split.best_split(spec, placement, budgets))
    return replace(placement, split=()), memory.estimate(spec, placement)


def _placement_name(placement: Placement, has_model: bool) -> str:
    if not has_model:
        return "none"
    if placement.gpu_count == 0:
        return "cpu"
    return "gpu+ram" if placement.cpu_moe_layers else "gpu"


def _bigger_alternative(
    catalog: Catalog,
    spec: ModelSpec,
    gpus: tuple[Gpu, ...],
    ram_budget: int,
    explicit: bool,
) -> tuple[ModelSpec, Placement] | None:
    """A larger model that would also run here (with experts in RAM), worth a mention."""
    if explicit:
        return None
    for other in sorted(catalog.models, key=lambda m: m.total_bytes, reverse=True):
        if other.total_bytes <= spec.total_bytes:
            break
        hit = _place(other, _budgets(gpus), ram_budget, Wishes())
        if hit and hit[0].gpu_count:
            return other, hit[0]
    return None
