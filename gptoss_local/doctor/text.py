"""The human-readable `doctor` report."""

from __future__ import annotations

from typing import Any

from gptoss_local import __version__, paths
from gptoss_local.backends.ollama_status import ollama_status, status_line
from gptoss_local.hardware.engine import EngineStatus
from gptoss_local.hardware.machine import Hardware
from gptoss_local.plan.planner import Plan
from gptoss_local.plan.text import speed_range
from gptoss_local.units import gib

_PLACEMENT = {
    "gpu": "entirely on the GPU",
    "gpu+ram": "GPU, with the experts of {n} layers in system RAM",
    "cpu": "CPU only",
    "none": "nothing fits",
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
    lines = [f"{bold}gptoss-local {__version__}{reset}", "", f"{bold}GPUs{reset}"]
    lines += gpu_lines(hardware)
    lines += ["", f"{bold}System{reset}", *system_lines(hardware)]
    lines += ["", f"{bold}Engine{reset}", f"  {_engine_line(engine)}"]
    lines.append(f"  {status_line(ollama if ollama is not None else ollama_status())}")
    lines += ["", f"{bold}Plan{reset}", *plan_lines(plan)]
    alerts = warnings + list(plan.warnings) + list(hardware.problems)
    if alerts:
        lines += ["", f"{red}Warnings{reset}"]
        for alert in alerts:
            first, *rest = alert.splitlines()
            lines.append(f"  {red}!{reset} {first}")
            lines += [f"    {line}" for line in rest]
    return "\n".join(lines) + "\n"


def gpu_lines(hardware: Hardware) -> list[str]:
    """One line per GPU (or why there is none), indented by two spaces."""
    if not hardware.gpus:
        return [f"  none ({hardware.nvml_error or 'NVML reported no devices'})"]
    driver = ""
    if hardware.driver_version:
        driver = f"  driver {hardware.driver_version} (CUDA {hardware.cuda_driver_version or '?'})"
    lines = []
    for gpu in hardware.gpus:
        cc = f"  compute {gpu.compute_capability}" if gpu.compute_capability else ""
        lines.append(
            f"  {gpu.index}  {gpu.name}  [{gpu.gpu_class}]  {gib(gpu.free_vram)} free of "
            f"{gib(gpu.total_vram)}{cc}{driver}"
        )
    return lines


def system_lines(hardware: Hardware) -> list[str]:
    """RAM, disk and the models folder, indented by two spaces."""
    return [
        f"  RAM   {gib(hardware.ram_available)} available of {gib(hardware.ram_total)}"
        f"  ·  {hardware.cpu_cores} cores / {hardware.cpu_threads} threads",
        f"  Disk  {gib(hardware.disk_free)} free at {hardware.disk_path}",
        f"  Models folder  {paths.models_dir()}",
    ]


def _engine_line(engine: EngineStatus) -> str:
    if not engine.installed or engine.error:
        return f"llama-cpp-python: {engine.error}"
    gpu = "yes" if engine.gpu_offload else "NO (CPU-only build)"
    if not engine.gpu_offload and "CUDA" in engine.backends:
        gpu = "NO (CUDA built in, but no usable GPU)"
    backends = ", ".join(engine.backends) or "unknown"
    return f"llama-cpp-python {engine.version}  ·  GPU offload: {gpu}  ·  backends: {backends}"


def plan_lines(plan: Plan) -> list[str]:
    """The plan: model, placement, context, memory, speed and why, indented by two spaces."""
    where = _PLACEMENT[plan.placement].format(n=plan.cpu_moe_layers)
    lines = [f"  model      {plan.model or '—'}  (backend {plan.backend})", f"  placement  {where}"]
    if plan.model:
        flash = "on" if plan.flash_attn else "off"
        lines.append(
            f"  context    {plan.context:,} tokens  ·  KV cache {plan.kv_type}"
            f"  ·  flash attention {flash}"
        )
        vram = f"{gib(plan.est_vram)} VRAM, " if plan.est_vram else ""
        lines.append(f"  memory     about {vram}{gib(plan.est_ram)} RAM")
    if plan.speed:
        lines.append(
            f"  speed      {speed_range(plan.speed.low, plan.speed.high)} tokens/s "
            f"({plan.speed.basis})"
        )
    lines.append("  why")
    lines += [f"    - {reason}" for reason in plan.reasons]
    return lines
