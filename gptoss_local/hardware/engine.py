"""What the installed llama.cpp engine (llama-cpp-python) can do on this machine."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from gptoss_local.backends.llama_native import route_logs

DISTRIBUTION = "llama-cpp-python"
REQUIREMENT = "llama-cpp-python>=0.3.36,<0.4"


@dataclass(frozen=True)
class EngineStatus:
    """Whether llama-cpp-python imports, its version, and whether it can offload to a GPU."""

    installed: bool
    version: str | None
    gpu_offload: bool | None
    backends: tuple[str, ...]
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON output."""
        return asdict(self)


def engine_status() -> EngineStatus:
    """Load llama-cpp-python's native library and ask what it was built with. Never raises."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        installed_version = version(DISTRIBUTION)
    except PackageNotFoundError:
        return EngineStatus(False, None, None, (), f"{DISTRIBUTION} is not installed")
    try:
        import llama_cpp

        route_logs(None)  # the first call initialises CUDA, which logs; keep that off the terminal
        offload = bool(llama_cpp.llama_supports_gpu_offload())
        info = llama_cpp.llama_print_system_info().decode(errors="replace")
    except Exception as exc:  # a broken native library raises OSError, RuntimeError, ...
        return EngineStatus(
            True, installed_version, None, (), f"{DISTRIBUTION} failed to load: {exc}"
        )
    backends = tuple(part.split(":")[0].strip() for part in info.split("|") if ":" in part)
    return EngineStatus(True, installed_version, offload, tuple(dict.fromkeys(backends)))


def cuda_rebuild_hint() -> str:
    """How to replace a CPU-only llama-cpp-python inside the pipx environment with a CUDA build."""
    command = (
        "pipx runpip gptoss-local install --force-reinstall --no-cache-dir --no-deps "
        f'"{REQUIREMENT}"'
    )
    return (
        "Rebuild llama-cpp-python with CUDA (needs the CUDA toolkit and a C++ compiler):\n"
        f'  Linux:   CMAKE_ARGS="-DGGML_CUDA=on" {command}\n'
        f'  Windows: $env:CMAKE_ARGS="-DGGML_CUDA=on"; {command}'
    )
