"""Make a llama.cpp built against NVIDIA's pip CUDA packages find their libraries at load time.

`gptoss-local engine install --cuda` can build llama-cpp-python with NVIDIA's pip packages as the
CUDA toolkit. Their libraries (libcudart, libcublas, libcublasLt) then live in the environment's
site-packages (`nvidia/cu13/lib`, or `nvidia/cuda_runtime/lib` and `nvidia/cublas/lib` for
CUDA 12), where the system's loader does not look. The build records those folders in the
library's RPATH, but a moved environment or Windows (which has no RPATH) needs more, so before
llama_cpp is first imported `prepare()`:

- on Linux loads them by full path with RTLD_GLOBAL, cudart first, then cublasLt, then cublas
  (which needs cublasLt); ggml-cuda's dependencies are then found by their SONAME;
- on Windows adds their folders to the DLL search paths (`os.add_dll_directory` and PATH) and
  loads them by full path in the same order, since Windows then finds a loaded DLL by name.

Nothing happens for a CPU-only llama-cpp-python, or where the environment has no pip CUDA
packages. Everything that touches the system is injectable, so tests run on any OS.
"""

from __future__ import annotations

import ctypes
import os
import site
import sys
import threading
from collections.abc import Callable, Iterable, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Library folders of NVIDIA's pip packages, relative to site-packages, newest CUDA first.
# CUDA 13 puts every package into one tree (nvidia/cu13); CUDA 12 gives each its own folder.
LINUX_LAYOUTS = (("nvidia/cu13/lib",), ("nvidia/cuda_runtime/lib", "nvidia/cublas/lib"))
WINDOWS_LAYOUTS = (
    ("nvidia/cu13/bin/x64", "nvidia/cu13/bin/x86_64", "nvidia/cu13/bin"),
    ("nvidia/cuda_runtime/bin", "nvidia/cublas/bin"),
)
# Load order: cublas needs cublasLt, and both need cudart.
_LINUX_LIBRARIES = ("libcudart.so.*", "libcublasLt.so.*", "libcublas.so.*")
_WINDOWS_LIBRARIES = ("cudart64_*.dll", "cublasLt64_*.dll", "cublas64_*.dll")
_CUDA_ENGINE_FILES = ("libggml-cuda.so", "ggml-cuda.dll")


@dataclass
class Prepared:
    """What `prepare()` did: the libraries loaded or folders added, and what failed."""

    loaded: list[str] = field(default_factory=list)
    dll_dirs: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


_lock = threading.Lock()
_done: Prepared | None = None
_keep: list[Any] = []  # handles that must live as long as the process


def site_dirs() -> list[Path]:
    """This environment's site-packages folders (user site included), as sys.path has them."""
    found = [Path(p) for p in site.getsitepackages()] if hasattr(site, "getsitepackages") else []
    user = site.getusersitepackages() if site.ENABLE_USER_SITE else None
    if user:
        found.append(Path(user))
    found += [Path(p) for p in sys.path if p.endswith("site-packages")]
    return list(dict.fromkeys(found))


def cuda_library_dirs(sites: Iterable[Path], platform: str = sys.platform) -> list[Path]:
    """The first pip CUDA layout found in `sites`: its folders that hold a CUDA runtime.

    Args:
        sites: site-packages folders, searched in order.
        platform: a `sys.platform` value.

    Returns:
        Existing folders of one layout (CUDA 13 before CUDA 12), or [] when there is none.
    """
    windows = platform == "win32"
    layouts = WINDOWS_LAYOUTS if windows else LINUX_LAYOUTS
    patterns = _WINDOWS_LIBRARIES if windows else _LINUX_LIBRARIES
    sites = list(sites)
    for layout in layouts:
        for base in sites:
            dirs = [base / rel for rel in layout if (base / rel).is_dir()]
            dirs = [d for d in dirs if any(any(d.glob(p)) for p in patterns)]
            if any(any(d.glob(patterns[0])) for d in dirs):  # a runtime is there
                return dirs
    return []


def preload_order(dirs: Iterable[Path], platform: str = sys.platform) -> list[Path]:
    """The library files to load from `dirs`, in dependency order (cudart, cublasLt, cublas)."""
    patterns = _WINDOWS_LIBRARIES if platform == "win32" else _LINUX_LIBRARIES
    dirs = list(dirs)
    order: list[Path] = []
    for pattern in patterns:
        for folder in dirs:
            order += sorted(folder.glob(pattern))
    return order


def has_cuda_engine(llama_lib_dir: Path | None) -> bool:
    """Whether llama-cpp-python's library folder holds a CUDA ggml backend."""
    return llama_lib_dir is not None and any(
        (llama_lib_dir / name).exists() for name in _CUDA_ENGINE_FILES
    )


def llama_lib_dir(sites: Iterable[Path]) -> Path | None:
    """llama-cpp-python's native library folder (without importing it), or None."""
    override = os.environ.get("LLAMA_CPP_LIB_PATH")
    if override:
        return Path(override)
    for base in sites:
        candidate = base / "llama_cpp" / "lib"
        if candidate.is_dir():
            return candidate
    return None


def prepare(
    sites: Iterable[Path] | None = None,
    platform: str = sys.platform,
    load: Callable[[str], Any] | None = None,
    add_dll_directory: Callable[[str], Any] | None = None,
    environ: MutableMapping[str, str] | None = None,
) -> Prepared:
    """Let a pip-CUDA build of llama.cpp find its runtime; call before importing llama_cpp.

    Runs once per process (later calls return the first result). Never raises.

    Args:
        sites: site-packages folders; default: this environment's.
        platform: a `sys.platform` value.
        load: loads one library by path (default: ctypes.CDLL, with RTLD_GLOBAL on Linux).
        add_dll_directory: Windows' `os.add_dll_directory` (injectable for tests).
        environ: the environment whose PATH gets the DLL folders on Windows (default os.environ).
    """
    global _done
    with _lock:
        if _done is None:
            sites = list(sites or site_dirs())
            env = os.environ if environ is None else environ
            _done = _prepare(sites, platform, load or _load_global, add_dll_directory, env)
        return _done


def _prepare(
    sites: list[Path],
    platform: str,
    load: Callable[[str], Any],
    add_dll_directory: Callable[[str], Any] | None,
    environ: MutableMapping[str, str],
) -> Prepared:
    result = Prepared()
    if not has_cuda_engine(llama_lib_dir(sites)):
        return result
    dirs = cuda_library_dirs(sites, platform)
    if platform == "win32":
        _add_dll_dirs(dirs, add_dll_directory, environ, result)
    for library in preload_order(dirs, platform):
        try:
            _keep.append(load(str(library)))
            result.loaded.append(str(library))
        except OSError as exc:  # the library's own lookup may still find one
            result.failures.append(f"{library}: {exc}")
    return result


def _add_dll_dirs(
    dirs: list[Path],
    add_dll_directory: Callable[[str], Any] | None,
    environ: MutableMapping[str, str],
    result: Prepared,
) -> None:
    """Windows: the DLL folders on both search paths, since llama-cpp-python loads its DLL
    with the standard search order (which reads PATH, not `add_dll_directory`'s list)."""
    adder = add_dll_directory or getattr(os, "add_dll_directory", None)
    for folder in dirs:
        try:
            if adder is not None:
                _keep.append(adder(str(folder)))
            environ["PATH"] = os.pathsep.join([str(folder), environ.get("PATH", "")])
            result.dll_dirs.append(str(folder))
        except OSError as exc:
            result.failures.append(f"{folder}: {exc}")


def _load_global(path: str) -> Any:
    # Windows: a DLL loaded by full path is then found by name when ggml-cuda.dll needs it.
    return ctypes.CDLL(path, mode=getattr(ctypes, "RTLD_GLOBAL", 0))


def reset_for_tests() -> None:
    """Forget what `prepare()` did (tests only)."""
    global _done
    with _lock:
        _done = None


def gpu_devices(bindings: Any) -> list[str] | None:
    """Descriptions of the GPUs ggml can use, through llama-cpp-python's loaded library.

    ggml's device functions live in libggml-base, which `dlsym` reaches through libllama's
    handle on Linux; elsewhere (Windows' GetProcAddress does not search dependencies) this
    returns None when they cannot be resolved.
    """
    try:
        handle = bindings._lib
        count = handle.ggml_backend_dev_count
        get = handle.ggml_backend_dev_get
        kind = handle.ggml_backend_dev_type
        describe = handle.ggml_backend_dev_description
    except AttributeError:
        return None
    count.restype, count.argtypes = ctypes.c_size_t, []
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
    kind.restype, kind.argtypes = ctypes.c_int, [ctypes.c_void_p]
    describe.restype, describe.argtypes = ctypes.c_char_p, [ctypes.c_void_p]
    found = []
    for index in range(count()):
        device = get(index)
        if kind(device) in (_DEVICE_GPU, _DEVICE_IGPU):
            found.append((describe(device) or b"").decode(errors="replace"))
    return found


_DEVICE_GPU, _DEVICE_IGPU = 1, 2  # enum ggml_backend_dev_type
