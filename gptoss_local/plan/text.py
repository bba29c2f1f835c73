"""The planner's reasons and warnings, in words a person can act on."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from gptoss_local.i18n import _, ngettext
from gptoss_local.kinds import TRAITS, effort_word
from gptoss_local.plan import batching, memory
from gptoss_local.plan.chosen import Plan
from gptoss_local.units import GIB, gib

if TYPE_CHECKING:
    from gptoss_local.catalog import Catalog, ModelSpec
    from gptoss_local.hardware.machine import Gpu, Hardware
    from gptoss_local.plan.memory import Placement


def speed_range(low: float, high: float) -> str:
    """'150–220', or 'about 400' when both ends are the same."""
    if low == high:
        return _("about {speed:g}").format(speed=low)
    return f"{low:g}–{high:g}"


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
    reasons = [_hardware_line(hardware, gpus, len(plan.gpu_indices)), *notes, why_model]
    warnings: list[str] = []
    reasons.append(_placement_line(plan, spec, hardware))
    if len(plan.cards) > 1:
        reasons.append(split_line(plan))
    if plan.fits and plan.n_ubatch > batching.SMALLEST:
        reasons.append(_micro_batch_line(plan, spec))
    if plan.fits and plan.speed:
        reasons.append(
            _("Expected decode speed: {speed} tokens/s ({basis}).").format(
                speed=speed_range(plan.speed.low, plan.speed.high), basis=plan.speed.basis
            )
        )
    if not plan.fits:
        warnings.append(_shortfall_line(plan, spec))
    if alternative:
        other, where = alternative
        reasons.append(
            _(
                "{model} would also run here with the experts of {moved} of {layers} layers "
                "in system RAM (much slower): --model {alias}."
            ).format(
                model=other.name,
                moved=where.cpu_moe_layers,
                layers=other.shape.layers,
                alias=other.aliases[0],
            )
        )
    return reasons, warnings


def why_model(spec: ModelSpec, catalog: Catalog, explicit: bool) -> str:
    """Why this model: asked for, the largest that fits a big card, or the default."""
    if explicit:
        return _("{model} was asked for.").format(model=spec.name)
    if spec.total_bytes > min(m.total_bytes for m in catalog.models):
        return _(
            "{model} fits entirely on this workstation or data-centre GPU memory, "
            "so the larger model is chosen."
        ).format(model=spec.name)
    bigger = [m.name for m in catalog.models if m.total_bytes > spec.total_bytes]
    if not bigger:
        return _("{model} is the model for this machine.").format(model=spec.name)
    return _(
        "{model} is the default; {bigger} is chosen by itself only where a "
        "workstation or data-centre GPU holds it entirely."
    ).format(model=spec.name, bigger=", ".join(bigger))


def backend_warnings(plan: Plan, asked_gpus: bool = False) -> list[str]:
    """What the chosen backend cannot do of the plan; `asked_gpus`: the user named the cards."""
    if TRAITS[plan.backend].experts_in_ram:
        return []
    warnings = []
    if plan.cpu_moe_layers:
        warnings.append(
            _(
                "Ollama cannot keep only the experts in system RAM: it moves whole layers to the "
                "CPU, which is slower. The llama.cpp backend (--backend llamacpp) follows this "
                "plan exactly."
            )
        )
    if len(plan.cards) > 1 or asked_gpus:
        warnings.append(
            _(
                "Ollama shares a model among the GPUs its own way: it cannot take this plan's "
                "layers per card ({split}) nor be told which cards to use (--gpus or the gpus "
                "setting); it uses every GPU CUDA_VISIBLE_DEVICES lets `ollama serve` see. "
                "The llama.cpp backend (--backend llamacpp) follows this plan exactly."
            ).format(split=split_summary(plan) or _("one card"))
        )
    return warnings


def split_summary(plan: Plan) -> str:
    """'GPU 0: 16 layers, GPU 1: 8 layers + output' (empty with one card or none)."""
    if len(plan.cards) < 2:
        return ""
    parts = []
    for card in plan.cards:
        layers = ngettext("{n} layer", "{n} layers", card.layers).format(n=card.layers)
        if card.output:
            layers = (
                _("{layers} + output").format(layers=layers)
                if card.layers
                else _("the output layer")
            )
        parts.append(_("GPU {index}: {layers}").format(index=card.index, layers=layers))
    return ", ".join(parts)


def split_line(plan: Plan) -> str:
    """Why the layers are shared among the cards as they are."""
    if plan.cpu_moe_layers:
        return _(
            "The layers are shared among {count} GPUs so that each is filled to about the same "
            "part of its usable VRAM (llama.cpp's layer split: {split}); the experts kept in "
            "RAM are those of the first layers, so the first card takes more of them."
        ).format(count=len(plan.cards), split=split_summary(plan))
    return _(
        "The layers are shared among {count} GPUs so that each is filled to about the same "
        "part of its usable VRAM (llama.cpp's layer split: {split})."
    ).format(count=len(plan.cards), split=split_summary(plan))


def card_lines(plan: Plan) -> list[str]:
    """One line per card of a plan on several: its layers and its share of VRAM against what
    it has usable and free."""
    if len(plan.cards) < 2:
        return []
    lines = []
    for card in plan.cards:
        layers = ""
        if card.layers:
            last = card.first_layer + card.layers - 1
            layers = (
                _("layers {first}–{last}").format(first=card.first_layer, last=last)
                if last > card.first_layer
                else _("layer {first}").format(first=card.first_layer)
            )
        if card.output:
            layers = (
                _("{layers} + output").format(layers=layers)
                if card.layers
                else _("the output layer")
            )
        if card.experts_in_ram:
            layers = ngettext(
                "{layers} (experts of {n} in RAM)", "{layers} (experts of {n} in RAM)",
                card.experts_in_ram,
            ).format(layers=layers, n=card.experts_in_ram)  # fmt: skip
        share = _("{vram:.1f} of {usable} usable, {free:.1f} free").format(
            vram=card.est_vram / GIB, usable=gib(card.usable), free=card.free / GIB
        )
        lines.append(
            _("GPU {index} {name}: {layers}; {share}").format(
                index=card.index, name=short_name(card.name), layers=layers, share=share
            )
        )
    return lines


def short_name(name: str) -> str:
    """A card's name without the maker's words: "NVIDIA GeForce RTX 4090" → "RTX 4090"."""
    return name.removeprefix("NVIDIA ").removeprefix("GeForce ")


def disk_warnings(spec: ModelSpec, hardware: Hardware) -> list[str]:
    """Whether the model's download fits the disk."""
    if spec.total_bytes + GIB <= hardware.disk_free:
        return []
    return [
        _("Downloading {model} needs {size} of disk; only {free} is free at {path}.").format(
            model=spec.name,
            size=gib(spec.total_bytes),
            free=gib(hardware.disk_free),
            path=hardware.disk_path,
        )
    ]


def left_out_line(gpu: Gpu) -> str:
    """A card too full to help."""
    return _("GPU {index} ({name}) has only {free} free and is left out.").format(
        index=gpu.index, name=gpu.name, free=gib(gpu.free_vram)
    )


def hidden_line(gpu: Gpu) -> str:
    """A card CUDA_VISIBLE_DEVICES hides from llama.cpp."""
    return _("GPU {index} ({name}) is hidden by CUDA_VISIBLE_DEVICES and is left out.").format(
        index=gpu.index, name=gpu.name
    )


def not_asked_line(gpu: Gpu, asked: tuple[int, ...]) -> str:
    """A card the user did not name (--gpus, the gpus setting)."""
    return _("GPU {index} ({name}) is not among the GPUs asked for ({asked}).").format(
        index=gpu.index, name=gpu.name, asked=",".join(map(str, asked))
    )


def too_small_line(gpu: Gpu, usable: int, least: int) -> str:
    """A card whose usable VRAM holds less than its own buffers and one layer."""
    return _(
        "GPU {index} ({name}) is too small to help and is left out: {usable} usable, and a "
        "card needs about {least} for its own buffers and one layer."
    ).format(index=gpu.index, name=gpu.name, usable=gib(usable), least=gib(least))


def not_needed_line(gpu: Gpu, model: str) -> str:
    """A card the plan does as well without (a card boundary costs a hop per token)."""
    return _(
        "GPU {index} ({name}) is left out: {model} runs as well on fewer cards, and each card "
        "more adds a hop between cards to every token."
    ).format(index=gpu.index, name=gpu.name, model=model)


def missing_gpu_warning(asked: tuple[int, ...] | None, hardware: Hardware) -> list[str]:
    """GPUs asked for that this PC does not have."""
    known = {gpu.index for gpu in hardware.gpus}
    missing = [index for index in asked or () if index not in known]
    if not missing:
        return []
    found = ", ".join(str(gpu.index) for gpu in hardware.gpus) or _("none")
    return [
        _("GPU {missing} was asked for, but this PC has no such GPU (found: {found}).").format(
            missing=", ".join(map(str, missing)), found=found
        )
    ]


def min_context_line(least: int) -> str:
    """Why the context is no smaller (an agent asked for a least context)."""
    return _(
        "The context is kept at {least:,} tokens or more: an agent's instructions and tools take "
        "thousands of tokens before the first question, and every command's output adds more."
    ).format(least=least)


def min_context_warning(least: int, context: int) -> str:
    """The least context asked for did not fit."""
    return _(
        "A context of {least:,} tokens does not fit here, so it is {context:,}: an agent's long "
        "prompts may not fit; close other programs or choose a smaller model."
    ).format(least=least, context=context)


def context_cut_warning(model: str, asked: int, context: int, context_max: int) -> str:
    """The context asked for is beyond what the model allows (or below the least that works),
    so another is used."""
    if asked > context_max:
        return _(
            "{model} holds at most {most:,} tokens of context; using that instead of the "
            "{asked:,} asked for."
        ).format(model=model, most=context_max, asked=asked)
    return _(
        "A {asked:,}-token context is too small to hold a reply; using {context:,} tokens."
    ).format(asked=asked, context=context)


def effort_warnings(effort: str, context: int, context_max: int | None = None) -> list[str]:
    """Reasoning needs room: high effort in a small context loses track of the question.
    The advice never goes past what the model holds (`context_max`)."""
    room = {"high": 16_384, "medium": 8_192}.get(effort)
    if room is None or context >= room:
        return []
    if context_max is not None and context >= context_max:  # the model holds no more
        return [
            _(
                "A {context:,}-token context, the most this model holds, is tight for {effort} "
                "reasoning effort; low effort (--effort low) leaves more room for the answer."
            ).format(context=context, effort=effort_word(effort))
        ]
    least = min(room, context_max) if context_max is not None else room
    if effort == "high":
        return [
            _(
                "High reasoning effort can fill a {context:,}-token context quickly; "
                "use {least:,} or more."
            ).format(context=context, least=least)
        ]
    return [
        _(
            "A {context:,}-token context is tight for medium reasoning effort; "
            "use {least:,} or more."
        ).format(context=context, least=least)
    ]


def _hardware_line(hardware: Hardware, gpus: tuple[Gpu, ...], plan_cards: int) -> str:
    ram = _("{available} of {total} RAM available").format(
        available=gib(hardware.ram_available), total=gib(hardware.ram_total)
    )
    if not hardware.gpus and hardware.nvml_error:
        return _("No NVIDIA GPU found ({why}); {ram}.").format(why=hardware.nvml_error, ram=ram)
    if not hardware.gpus:
        return _("No NVIDIA GPU found; {ram}.").format(ram=ram)
    if not gpus:
        return _("No GPU has enough free memory to help; {ram}.").format(ram=ram)
    names = Counter(g.name for g in gpus)
    cards = ", ".join(f"{n}× {name}" if n > 1 else name for name, n in names.items())
    free = gib(sum(g.free_vram for g in gpus))
    total = gib(sum(g.total_vram for g in gpus))
    if plan_cards > 1:
        return _(
            "Found {cards} (llama.cpp splits the layers across them): {free} of {total} VRAM "
            "free; {ram}."
        ).format(cards=cards, free=free, total=total, ram=ram)
    return _("Found {cards}: {free} of {total} VRAM free; {ram}.").format(
        cards=cards, free=free, total=total, ram=ram
    )


def _placement_line(plan: Plan, spec: ModelSpec, hardware: Hardware) -> str:
    # Each placement's sentence, filled from the same numbers of the plan.
    sentences = {
        "gpu": _(
            "{model} runs entirely on the GPU with a {context:,}-token context: about {vram} of "
            "VRAM of {budget} usable (free VRAM less a safety margin)."
        ),
        "gpu+ram": _(
            "{model} does not fit entirely in VRAM, so the experts of {moved} of {layers} layers "
            "({size}) stay in system RAM with a {context:,}-token context: about {vram} VRAM and "
            "{ram} RAM. The rest stays on the GPU; decode is slower than fully on the GPU."
        ),
        "cpu": _(
            "{model} runs on the CPU from system RAM with a {context:,}-token context: about "
            "{ram} of {budget} usable RAM. Expect slow replies."
        ),
    }
    sentence = sentences.get(
        plan.placement, _("Nothing fits on this machine with a {context:,}-token context.")
    )
    return sentence.format(
        model=spec.name,
        context=plan.context,
        vram=gib(plan.est_vram),
        ram=gib(plan.est_ram),
        budget=gib(plan.ram_budget if plan.placement == "cpu" else plan.vram_budget),
        moved=plan.cpu_moe_layers,
        layers=spec.shape.layers,
        size=gib(plan.cpu_moe_layers * spec.shape.expert_layer_bytes),
    )


def _micro_batch_line(plan: Plan, spec: ModelSpec) -> str:
    experts_on_gpu = plan.cpu_moe_layers < spec.shape.layers
    extra = memory.compute_buffer_bytes(spec, plan.n_ubatch, experts_on_gpu)
    extra -= memory.compute_buffer_bytes(spec, batching.SMALLEST, experts_on_gpu)
    if plan.cpu_moe_layers:
        return _(
            "Prompts are read {batch:,} tokens at a time (several times faster with experts in "
            "RAM than {smallest}), for about {extra} more VRAM."
        ).format(batch=plan.n_ubatch, smallest=batching.SMALLEST, extra=gib(extra))
    return _(
        "Prompts are read {batch:,} tokens at a time (faster than {smallest}), for about "
        "{extra} more VRAM."
    ).format(batch=plan.n_ubatch, smallest=batching.SMALLEST, extra=gib(extra))


def _shortfall_line(plan: Plan, spec: ModelSpec) -> str:
    vram = _("{need} VRAM (usable: {usable})").format(
        need=gib(plan.est_vram), usable=gib(plan.vram_budget)
    )
    ram = _("{need} RAM (usable: {usable})").format(
        need=gib(plan.est_ram), usable=gib(plan.ram_budget)
    )
    short_vram, short_ram = plan.est_vram > plan.vram_budget, plan.est_ram > plan.ram_budget
    if short_vram and short_ram:
        need = _("{vram} and {ram}").format(vram=vram, ram=ram)
    else:
        need = vram if short_vram else ram if short_ram else _("more memory than is free")
    if plan.model:
        return _(
            "{model} will not fit: the least demanding placement of {model} needs {need}; close "
            "other programs, choose a smaller context, or use a machine with more memory."
        ).format(model=spec.name, need=need)
    return _(
        "No model fits: the least demanding placement of {model} needs {need}; close other "
        "programs, choose a smaller context, or use a machine with more memory."
    ).format(model=spec.name, need=need)
