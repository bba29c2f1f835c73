"""`gptoss-local doctor`: what this PC can run, and why, as text or as JSON.

JSON schema (documented in docs/doctor-json.md): top-level keys `gpus`, `ram`, `disk`, `engine`,
`plan`. Sizes are bytes.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from gptoss_local import catalog as catalog_mod
from gptoss_local import paths
from gptoss_local.backends.ollama.status import ollama_status
from gptoss_local.doctor.weights import weights_status
from gptoss_local.engine_setup.advice import gpu_engine_advice, ollama_installed
from gptoss_local.hardware.engine import EngineStatus, engine_status
from gptoss_local.hardware.machine import Hardware, probe
from gptoss_local.i18n import _
from gptoss_local.kinds import TRAITS, BackendName
from gptoss_local.plan.planner import Plan, plan
from gptoss_local.plan.wishes import Wishes


def gather(wishes: Wishes, nvml: Any = None) -> tuple[Hardware, EngineStatus, Plan, list[str]]:
    """Probe, check the engine and plan; returns them with doctor-level warnings."""
    hardware = probe(nvml)
    engine = engine_status()
    the_plan = plan(hardware, catalog_mod.load(), wishes)
    warnings = engine_warnings(hardware, engine, wishes.backend, ollama_installed())
    return hardware, engine, the_plan, warnings


def engine_warnings(
    hardware: Hardware, engine: EngineStatus, backend: BackendName, ollama: bool = False
) -> list[str]:
    """Loud warnings about the engine: missing, broken, or CPU-only beside an NVIDIA GPU.

    `ollama`: whether Ollama is installed (then the CPU-only warning offers it too).
    """
    if not TRAITS[backend].in_process:  # another program's build is not ours to judge
        return []
    if not engine.installed or engine.error:
        return [
            _("{error}. Reinstall gptoss-local, or use --backend ollama.").format(
                error=engine.error
            )
        ]
    advice = gpu_engine_advice(hardware, engine, ollama)
    return [advice] if advice else []


def report(
    hardware: Hardware,
    engine: EngineStatus,
    the_plan: Plan,
    warnings: list[str],
    ollama: dict[str, Any] | None = None,
) -> dict:
    """The JSON document; `ollama` (from `ollama_status()`) is looked up when not given."""
    if ollama is None:
        ollama = ollama_status()
    gpus = [
        {
            **asdict(gpu),
            "driver_version": hardware.driver_version,
            "cuda_driver_version": hardware.cuda_driver_version,
        }
        for gpu in hardware.gpus
    ]
    return {
        "gpus": gpus,
        "ram": {
            "total": hardware.ram_total,
            "available": hardware.ram_available,
            "cpu_cores": hardware.cpu_cores,
            "cpu_threads": hardware.cpu_threads,
        },
        "disk": {
            "models_dir": str(paths.models_dir()),
            "path": hardware.disk_path,
            "free": hardware.disk_free,
        },
        "engine": {
            "llama_cpp": engine.to_dict(),
            "nvml": {"available": hardware.nvml_error is None, "error": hardware.nvml_error},
            "problems": list(hardware.problems),
            "warnings": warnings,
            "ollama": ollama,
        },
        "plan": {**the_plan.to_dict(), "weights": weights_status(the_plan, ollama)},
    }
