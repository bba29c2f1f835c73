"""What the installed llama.cpp engine (llama-cpp-python) can do on this machine."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from gptoss_local.backends.llamacpp.native import lib, route_logs
from gptoss_local.i18n import _

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
        error = _("{distribution} is not installed").format(distribution=DISTRIBUTION)
        return EngineStatus(False, None, None, (), error)
    try:
        llama = lib()  # the pip CUDA runtime's libraries are loaded first, where there are some
        route_logs(None)  # the first call initialises CUDA, which logs; keep that off the terminal
        offload = bool(llama.llama_supports_gpu_offload())
        info = llama.llama_print_system_info().decode(errors="replace")
    except Exception as exc:  # a broken native library raises OSError, RuntimeError, ...
        error = _("{distribution} failed to load: {error}").format(
            distribution=DISTRIBUTION, error=exc
        )
        return EngineStatus(True, installed_version, None, (), error)
    backends = tuple(part.split(":")[0].strip() for part in info.split("|") if ":" in part)
    return EngineStatus(True, installed_version, offload, tuple(dict.fromkeys(backends)))
