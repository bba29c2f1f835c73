"""What to tell someone whose llama-cpp-python is CPU-only on a PC with an NVIDIA GPU."""

from __future__ import annotations

from gptoss_local.backends.base import BackendError
from gptoss_local.backends.ollama.daemon import find_executable
from gptoss_local.hardware.engine import EngineStatus, engine_status
from gptoss_local.hardware.machine import Hardware
from gptoss_local.i18n import _

INSTALL_COMMAND = "gptoss-local engine install --cuda"


def gpu_engine_advice(
    hardware: Hardware, engine: EngineStatus, ollama_installed: bool
) -> str | None:
    """The advice when NVML sees an NVIDIA GPU and the engine cannot offload to it, else None.

    Args:
        hardware: What `hardware.probe()` found.
        engine: What `engine_status()` found.
        ollama_installed: Whether an `ollama` executable is here (then it is offered too).
    """
    if not hardware.gpus or engine.gpu_offload is not False:
        return None
    if "CUDA" in engine.backends:  # built for CUDA, yet no usable device
        lines = [
            _(
                "This llama-cpp-python has CUDA built in but cannot use the NVIDIA GPU: the "
                "driver may be too old for its CUDA runtime, or it was built for another "
                "architecture."
            ),
            _("See `gptoss-local engine`; rebuild for this GPU with `{command}`.").format(
                command=INSTALL_COMMAND
            ),
        ]
    else:
        lines = [
            _(
                "This llama-cpp-python build is CPU-only, but an NVIDIA GPU is present: models "
                "would run on the CPU, many times slower."
            ),
            _("Rebuild it for your GPU: `{command}` (add --dry-run to see the plan first).").format(
                command=INSTALL_COMMAND
            ),
        ]
    if ollama_installed:
        lines.append(_("Or use Ollama, which is installed here: --backend ollama."))
    return "\n".join(lines)


def ollama_installed() -> bool:
    """Whether an `ollama` executable is on PATH or in its usual install location."""
    try:
        find_executable()
    except BackendError:
        return False
    return True


def check_engine(hardware: Hardware) -> str | None:
    """`gpu_engine_advice` for this PC; loads llama-cpp-python only when there is a GPU."""
    if not hardware.gpus:
        return None
    return gpu_engine_advice(hardware, engine_status(), ollama_installed())
