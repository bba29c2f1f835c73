"""`gptoss-local engine`: what the installed llama.cpp engine is (schema: docs/engine-json.md)."""

from __future__ import annotations

import ctypes
import sys
from pathlib import Path
from typing import Any

from gptoss_local.backends.llamacpp import native as llama_native
from gptoss_local.backends.llamacpp import runtime as llama_runtime
from gptoss_local.engine_setup.check import cuda_archs
from gptoss_local.hardware.engine import engine_status

_CUDA_LIBRARIES = ("libcudart", "libcublasLt", "libcublas", "cudart64_", "cublas64_")


def engine_report(maps: Path = Path("/proc/self/maps")) -> dict[str, Any]:
    """Load llama-cpp-python and describe it; never raises.

    Args:
        maps: Linux's list of mapped files, read to see which CUDA runtime was loaded.
    """
    status = engine_status()  # imports llama_cpp after llama_runtime.prepare()
    prepared = llama_runtime.prepare()
    info = ""
    if status.installed and not status.error:
        try:
            info = llama_native.lib().llama_print_system_info().decode(errors="replace")
        except Exception:  # already loaded above; a failure here only loses the details
            info = ""
    libraries = loaded_cuda_libraries(maps)
    runtime = next((p for p in libraries if "cudart" in Path(p).name), None)
    return {
        "python": sys.executable,
        "environment": sys.prefix,
        "llama_cpp_python": {
            "installed": status.installed,
            "version": status.version,
            "error": status.error,
        },
        "gpu_offload": status.gpu_offload,
        "backends": list(status.backends),
        "cuda": {
            "built": "CUDA" in status.backends,
            "archs": cuda_archs(info),
            "runtime": {"path": runtime, "version": runtime_version(runtime)} if runtime else None,
            "libraries": libraries,
            "pip_library_dirs": [
                str(p) for p in llama_runtime.cuda_library_dirs(llama_runtime.site_dirs())
            ],
            "preloaded": prepared.loaded + prepared.dll_dirs,
        },
        "system_info": info.strip(),
    }


def loaded_cuda_libraries(maps: Path) -> list[str]:
    """CUDA runtime and cuBLAS files mapped into this process (Linux); [] elsewhere."""
    try:
        text = maps.read_text(errors="replace")
    except OSError:
        return []
    found = []
    for line in text.splitlines():
        path = line.split(maxsplit=5)[-1] if line.count(" ") >= 5 else ""
        if path.startswith("/") and Path(path).name.startswith(_CUDA_LIBRARIES):
            found.append(path)
    return list(dict.fromkeys(found))


def runtime_version(path: str | None) -> str | None:
    """'13.0' from the CUDA runtime library's cudaRuntimeGetVersion, or None."""
    if not path:
        return None
    try:
        value = ctypes.c_int()
        if ctypes.CDLL(path).cudaRuntimeGetVersion(ctypes.byref(value)) != 0:
            return None
    except (OSError, AttributeError):
        return None
    return f"{value.value // 1000}.{value.value % 1000 // 10}"
