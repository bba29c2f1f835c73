"""The words of the first-run screen: this PC, the plan and the weights, as plain lines."""

from __future__ import annotations

from gptoss_local.catalog import Catalog
from gptoss_local.doctor import text as doctor_text
from gptoss_local.hardware.machine import Hardware
from gptoss_local.i18n import _, ngettext
from gptoss_local.kinds import TRAITS
from gptoss_local.launch.preparation import Weights
from gptoss_local.plan.planner import Plan
from gptoss_local.store.progress import Progress
from gptoss_local.units import duration, size_text

CONTEXTS = (4_096, 8_192, 16_384, 32_768, 65_536, 131_072)


def hardware_lines(hardware: Hardware, engine_advice: str | None = None) -> list[str]:
    """GPUs, RAM and disk, as `doctor` shows them; then the engine advice, if there is one."""
    lines = [line.strip() for line in doctor_text.gpu_lines(hardware)]
    lines += [line.strip() for line in doctor_text.system_lines(hardware)]
    if engine_advice:
        first, *rest = engine_advice.splitlines()
        lines += [f"! {first}", *[f"  {line}" for line in rest]]
    return lines


def plan_lines(plan: Plan) -> list[str]:
    """The plan, its reasons and its warnings."""
    lines = [line[2:] for line in doctor_text.plan_lines(plan)]
    lines += [f"! {warning}" for warning in plan.warnings]
    return lines


def weights_lines(weights: Weights | None, plan: Plan) -> list[str]:
    """What is on disk, what a download needs, and where it comes from."""
    if weights is None:
        if not TRAITS[plan.backend].uses_models_folder and plan.model:
            return [_("Ollama keeps its own copy of the weights; if it has none, it downloads "
                      "them when the model is first loaded.")]  # fmt: skip
        return []
    spec = weights.spec
    size = size_text(spec.total_bytes)
    if weights.present:
        return [
            _("{model}: {size}, downloaded ({path})").format(
                model=spec.name, size=size, path=weights.path
            )
        ]
    lines = [
        _("{model}: {size}, to download into {folder}").format(
            model=spec.name, size=size, folder=weights.path.parent
        )
    ]
    if weights.on_disk:
        lines.append(
            _(
                "{here} is here from an earlier download: it resumes from there, {left} to go"
            ).format(here=size_text(weights.on_disk), left=size_text(weights.missing))
        )
    free = (
        _("{free} free on that disk — not enough: free up {more}")
        if weights.free_disk < weights.missing
        else _("{free} free on that disk")
    )
    more = size_text(max(0, weights.missing - weights.free_disk))
    lines.append(free.format(free=size_text(weights.free_disk), more=more))
    sources = _(", then ").join(weights.sources)
    lines.append(_("from {sources}; sha256-checked, resumable").format(sources=sources))
    if weights.regional:
        first = ", ".join(weights.regional)
        lines.append(_("{first} first, for your language (the `source` setting chooses another)")
                     .format(first=first))  # fmt: skip
    return lines


def download_line(progress: Progress) -> str:
    """'3.1 GiB of 12.8 GiB · 84.2 MiB/s · 1 min 58 s left' (or what the phase is)."""
    done, total = size_text(progress.done), size_text(progress.total)
    if progress.phase != "download":
        lines = {
            "check": _("checking what is here: {done} of {total}"),
            "verify": _("verifying: {done} of {total}"),
            "copy": _("copying: {done} of {total}"),
        }
        line = lines.get(progress.phase)
        if line is None:  # a phase without words of its own
            return f"{progress.phase}: {done} of {total}"
        return line.format(done=done, total=total)
    if progress.speed <= 0:
        return _("{done} of {total}").format(done=done, total=total)
    left = (progress.total - progress.done) / progress.speed
    return _("{done} of {total} · {speed}/s · {left} left").format(
        done=done, total=total, speed=size_text(progress.speed), left=duration(left)
    )


def model_options(catalog: Catalog, plan_model: str | None) -> list[tuple[str, str]]:
    """The model choices: the planner's, then every model of the manifest."""
    auto = (
        _("planner's choice ({model})").format(model=plan_model)
        if plan_model
        else _("planner's choice (none fits)")
    )
    return [(auto, "auto")] + [(m.name, m.name) for m in catalog.models]


def context_options(
    planned: int, context_max: int, wished: int | None = None
) -> list[tuple[str, int]]:
    """Context sizes up to the model's limit, the planner's first; `wished` (from the command
    line, say) among them even where it is not one of `CONTEXTS`."""
    auto = ngettext(
        "planner's choice ({n:,} token)", "planner's choice ({n:,} tokens)", planned
    ).format(n=planned)
    sizes = sorted({*CONTEXTS, wished} if wished else set(CONTEXTS))
    return [(auto, 0)] + [
        (ngettext("{n:,} token", "{n:,} tokens", n).format(n=n), n)
        for n in sizes
        if n <= context_max
    ]
