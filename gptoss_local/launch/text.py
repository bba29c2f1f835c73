"""The words of the first-run screen: this PC, the plan and the weights, as plain lines."""

from __future__ import annotations

from gptoss_local.catalog import Catalog
from gptoss_local.doctor import text as doctor_text
from gptoss_local.hardware.machine import Hardware
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
            return ["Ollama keeps its own copy of the weights; if it has none, it downloads "
                    "them when the model is first loaded."]  # fmt: skip
        return []
    spec = weights.spec
    size = size_text(spec.total_bytes)
    if weights.present:
        return [f"{spec.name}: {size}, downloaded ({weights.path})"]
    lines = [f"{spec.name}: {size}, to download into {weights.path.parent}"]
    if weights.on_disk:
        lines.append(
            f"{size_text(weights.on_disk)} is here from an earlier download: it resumes from "
            f"there, {size_text(weights.missing)} to go"
        )
    free = f"{size_text(weights.free_disk)} free on that disk"
    if weights.free_disk < weights.missing:
        free += f" — not enough: free up {size_text(weights.missing - weights.free_disk)}"
    lines.append(free)
    lines.append(f"from {', then '.join(weights.sources)}; sha256-checked, resumable")
    return lines


def download_line(progress: Progress) -> str:
    """'3.1 GiB of 12.8 GiB · 84.2 MiB/s · 1 min 58 s left' (or what the phase is)."""
    if progress.phase != "download":
        verb = {"check": "checking what is here", "verify": "verifying", "copy": "copying"}
        return f"{verb.get(progress.phase, progress.phase)}: {size_text(progress.done)} of " \
            f"{size_text(progress.total)}"  # fmt: skip
    line = f"{size_text(progress.done)} of {size_text(progress.total)}"
    if progress.speed > 0:
        left = (progress.total - progress.done) / progress.speed
        line += f" · {size_text(progress.speed)}/s · {duration(left)} left"
    return line


def model_options(catalog: Catalog, plan_model: str | None) -> list[tuple[str, str]]:
    """The model choices: the planner's, then every model of the manifest."""
    auto = f"planner's choice ({plan_model})" if plan_model else "planner's choice (none fits)"
    return [(auto, "auto")] + [(m.name, m.name) for m in catalog.models]


def context_options(planned: int, context_max: int) -> list[tuple[str, int]]:
    """Context sizes up to the model's limit, the planner's first."""
    return [(f"planner's choice ({planned:,} tokens)", 0)] + [
        (f"{n:,} tokens", n) for n in CONTEXTS if n <= context_max
    ]
