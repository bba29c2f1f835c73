"""The human-readable `doctor` report."""

from __future__ import annotations

from typing import Any

from gptoss_local import __version__, paths
from gptoss_local.backends.ollama.status import ollama_status, status_line
from gptoss_local.doctor.weights import weights_line, weights_status
from gptoss_local.hardware.engine import EngineStatus
from gptoss_local.hardware.machine import Hardware
from gptoss_local.i18n import N_, _, translate
from gptoss_local.plan.planner import Plan
from gptoss_local.plan.text import card_lines, speed_range
from gptoss_local.units import gib

_PLACEMENT = {
    "gpu": N_("entirely on the GPU"),
    "gpu+ram": N_("GPU, with the experts of {n} layers in system RAM"),
    "cpu": N_("CPU only"),
    "none": N_("nothing fits"),
}


def render(
    hardware: Hardware,
    engine: EngineStatus,
    plan: Plan,
    warnings: list[str],
    color: bool,
    ollama: dict[str, Any] | None = None,
) -> str:
    """The whole report as text; `color` adds ANSI bold and red for headings and warnings.

    `ollama` is `ollama_status()`'s result, looked up when not given.
    """

    bold, red, reset = ("\x1b[1m", "\x1b[1;31m", "\x1b[0m") if color else ("", "", "")
    lines = [f"{bold}gptoss-local {__version__}{reset}", "", f"{bold}{_('GPUs')}{reset}"]
    lines += gpu_lines(hardware)
    lines += ["", f"{bold}{_('System')}{reset}", *system_lines(hardware)]
    lines += ["", f"{bold}{_('Engine')}{reset}", f"  {_engine_line(engine)}"]
    ollama = ollama if ollama is not None else ollama_status()
    lines.append(f"  {status_line(ollama)}")
    planned = plan_lines(plan)
    weights = weights_line(weights_status(plan, ollama))
    if weights:  # before "why" and its reasons
        planned.insert(len(planned) - len(plan.reasons) - 1, f"  {weights}")
    lines += ["", f"{bold}{_('Plan')}{reset}", *planned]
    alerts = warnings + list(plan.warnings) + list(hardware.problems)
    if alerts:
        lines += ["", f"{red}{_('Warnings')}{reset}"]
        for alert in alerts:
            first, *rest = alert.splitlines()
            lines.append(f"  {red}!{reset} {first}")
            lines += [f"    {line}" for line in rest]
    return "\n".join(lines) + "\n"


def gpu_lines(hardware: Hardware) -> list[str]:
    """One line per GPU (or why there is none), indented by two spaces."""
    if not hardware.gpus:
        why = hardware.nvml_error or _("NVML reported no devices")
        return ["  " + _("none ({why})").format(why=why)]
    driver = ""
    if hardware.driver_version:
        driver = "  " + _("driver {version} (CUDA {cuda})").format(
            version=hardware.driver_version, cuda=hardware.cuda_driver_version or "?"
        )
    lines = []
    for gpu in hardware.gpus:
        cc = ""
        if gpu.compute_capability:
            cc = "  " + _("compute {capability}").format(capability=gpu.compute_capability)
        free = _("{free} free of {total}").format(
            free=gib(gpu.free_vram), total=gib(gpu.total_vram)
        )
        lines.append(f"  {gpu.index}  {gpu.name}  [{gpu.gpu_class}]  {free}{cc}{driver}")
    return lines


def system_lines(hardware: Hardware) -> list[str]:
    """RAM, disk and the models folder, indented by two spaces."""
    ram = _("RAM   {available} available of {total}  ·  {cores} cores / {threads} threads")
    disk = _("Disk  {free} free at {path}")
    return [
        "  "
        + ram.format(
            available=gib(hardware.ram_available),
            total=gib(hardware.ram_total),
            cores=hardware.cpu_cores,
            threads=hardware.cpu_threads,
        ),
        "  " + disk.format(free=gib(hardware.disk_free), path=hardware.disk_path),
        "  " + _("Models folder  {path}").format(path=paths.models_dir()),
    ]


def _engine_line(engine: EngineStatus) -> str:
    if not engine.installed or engine.error:
        return f"llama-cpp-python: {engine.error}"
    gpu = _("yes") if engine.gpu_offload else _("NO (CPU-only build)")
    if not engine.gpu_offload and "CUDA" in engine.backends:
        gpu = _("NO (CUDA built in, but no usable GPU)")
    backends = ", ".join(engine.backends) or _("unknown")
    return _("llama-cpp-python {version}  ·  GPU offload: {gpu}  ·  backends: {backends}").format(
        version=engine.version, gpu=gpu, backends=backends
    )


def plan_lines(plan: Plan) -> list[str]:
    """The plan: model, placement, context, memory, speed and why, indented by two spaces."""
    where = translate(_PLACEMENT[plan.placement]).format(n=plan.cpu_moe_layers)
    lines = [
        "  "
        + _("model      {model}  (backend {backend})").format(
            model=plan.model or "—", backend=plan.backend
        ),
        "  " + _("placement  {where}").format(where=where),
    ]
    if plan.model:
        flash = _("on") if plan.flash_attn else _("off")
        context = _(
            "context    {context:,} tokens  ·  KV cache {kv}  ·  flash attention {flash}"
        ).format(context=plan.context, kv=plan.kv_type, flash=flash)
        lines.append("  " + context)
        if plan.est_vram:
            memory = _("memory     about {vram} VRAM, {ram} RAM").format(
                vram=gib(plan.est_vram), ram=gib(plan.est_ram)
            )
        else:
            memory = _("memory     about {ram} RAM").format(ram=gib(plan.est_ram))
        lines.append("  " + memory)
        cards = card_lines(plan)
        if cards:
            lines.append("  " + _("GPUs       {card}").format(card=cards[0]))
            lines += ["             " + card for card in cards[1:]]
    if plan.speed:
        speed = _("speed      {speed} tokens/s ({basis})").format(
            speed=speed_range(plan.speed.low, plan.speed.high), basis=plan.speed.basis
        )
        lines.append("  " + speed)
    lines.append("  " + _("why"))
    lines += [f"    - {reason}" for reason in plan.reasons]
    return lines
