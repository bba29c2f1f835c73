"""What a CUDA build of llama-cpp-python needs: a CUDA toolkit, a C++ compiler, the driver.

A system toolkit is nvcc under CUDA_PATH / CUDA_HOME, on PATH, or in /usr/local/cuda. Without one,
NVIDIA's pip packages serve as the toolkit. Only CUDA 13's pip packages hold a complete compiler
(nvcc, cicc, cudafe++, fatbinary): CUDA 12's `nvidia-cuda-nvcc-cu12` has ptxas and libnvvm only
(checked on 12.4.131, 12.8.93 and 12.9.86), so pip cannot build for CUDA 12. CUDA 13 needs an
NVIDIA driver of the 580 series or newer and a GPU of compute capability 7.5 or newer.

Every lookup takes its `which`, environment and process runner as arguments, so tests can
describe any machine.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from gptoss_local.i18n import _

Which = Callable[[str], "str | None"]
Run = Callable[[list[str]], str]  # a command's output; raises OSError or CalledProcessError

# The pip toolkit: CUDA 13.0, the oldest 13 release, so every driver of the 580 series runs it.
PIP_CUDA_VERSION = "13.0"
PIP_PACKAGES = (
    "nvidia-cuda-nvcc==13.0.*",
    "nvidia-nvvm==13.0.*",
    "nvidia-cuda-crt==13.0.*",
    "nvidia-cuda-runtime==13.0.*",
    "nvidia-cuda-cccl==13.0.*",
    "nvidia-cublas==13.0.*",
)
PIP_MIN_ARCH = 75  # CUDA 13 builds for Turing (RTX 20) and newer only
_ARCH_NEEDS = {120: "12.8", 121: "12.9", 100: "12.8", 103: "12.9", 90: "11.8", 89: "11.8"}
_NVCC_VERSION = re.compile(r"release (\d+\.\d+)")


@dataclass(frozen=True)
class SystemToolkit:
    """A CUDA toolkit installed on the PC."""

    nvcc: Path
    root: Path
    version: str | None


@dataclass(frozen=True)
class PipToolkit:
    """Where NVIDIA's CUDA 13 pip packages land in an environment's site-packages."""

    root: Path  # site-packages/nvidia/cu13
    windows: bool

    @property
    def nvcc(self) -> Path:
        """The compiler driver."""
        return self.root / "bin" / ("nvcc.exe" if self.windows else "nvcc")

    @property
    def lib_dir(self) -> Path:
        """Where the link-time libraries are."""
        return self.root / "lib" / "x64" if self.windows else self.root / "lib"

    @property
    def dll_dir(self) -> Path:
        """Windows: where the DLLs are (cudart64_13.dll, cublas64_13.dll, ...)."""
        return self.root / "bin" / "x86_64"

    def library(self, name: str, implib_dir: Path | None = None) -> Path:
        """One link-time library ('cudart', 'cublas', 'cublasLt', 'cuda').

        On Windows cuBLAS has no import library in the wheels: it is made into `implib_dir`.
        """
        if not self.windows:
            return self.lib_dir / f"lib{name}.so.13"
        if name.startswith("cublas") and implib_dir is not None:
            return implib_dir / f"{name}.lib"
        return self.lib_dir / f"{name}.lib"


def run_text(argv: list[str]) -> str:
    """Run a short command and return its output (stdout and stderr)."""
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True)
    return done.stdout + done.stderr


def find_system_toolkit(
    env: Mapping[str, str],
    which: Which,
    run: Run = run_text,
    windows: bool = False,
    usual: tuple[str, ...] = ("/usr/local/cuda",),
) -> SystemToolkit | None:
    """The CUDA toolkit installed on this PC, or None.

    Args:
        env: The environment (CUDA_PATH, CUDA_HOME).
        which: `shutil.which` or a stand-in.
        run: Runs `nvcc --version`.
        windows: Whether this is Windows (nvcc.exe).
        usual: Toolkit folders to try last (Linux).
    """
    exe = "nvcc.exe" if windows else "nvcc"
    candidates = [Path(env[v]) / "bin" / exe for v in ("CUDA_PATH", "CUDA_HOME") if env.get(v)]
    on_path = which("nvcc")
    if on_path:
        candidates.append(Path(on_path))
    if not windows:
        candidates += [Path(folder) / "bin" / "nvcc" for folder in usual]
    for nvcc in candidates:
        root = nvcc.resolve().parent.parent
        # A wrapper script on PATH (/usr/local/bin/nvcc) has no toolkit around it: skip it.
        if nvcc.is_file() and _has_headers(root):
            return SystemToolkit(nvcc.resolve(), root, nvcc_version(nvcc, run))
    return None


def _has_headers(root: Path) -> bool:
    return (root / "include" / "cuda_runtime.h").is_file() or any(
        root.glob("targets/*/include/cuda_runtime.h")
    )


def nvcc_version(nvcc: Path, run: Run = run_text) -> str | None:
    """'13.0' from `nvcc --version`, or None when it does not run."""
    try:
        match = _NVCC_VERSION.search(run([str(nvcc), "--version"]))
    except (OSError, subprocess.SubprocessError):
        return None
    return match.group(1) if match else None


def arch_supported(arch: int, cuda_version: str | None) -> bool:
    """Whether a toolkit of `cuda_version` can build for compute capability `arch` (e.g. 89)."""
    if cuda_version is None:
        return True  # unknown: let nvcc say
    have = _version_tuple(cuda_version)
    if have >= (13, 0) and arch < PIP_MIN_ARCH:
        return False
    need = _ARCH_NEEDS.get(arch)
    return need is None or have >= _version_tuple(need)


def compiler_problem(windows: bool, which: Which) -> str | None:
    """What is missing to compile C++, in words saying what to install; None when it is there."""
    if windows:
        if which("cl"):
            return None
        return _(
            "No C++ compiler: cl.exe (MSVC) is not on PATH. Install Visual Studio Build Tools "
            "with the 'Desktop development with C++' workload, then run this from an "
            "'x64 Native Tools Command Prompt'."
        )
    if (which("g++") or which("c++")) and (which("gcc") or which("cc")):
        return None
    return _(
        "No C++ compiler: gcc/g++ not found. Install one: Debian/Ubuntu `sudo apt install "
        "build-essential`; Fedora `sudo dnf install gcc-c++`; Arch `sudo pacman -S base-devel`."
    )


def cxx_compiler(windows: bool, which: Which) -> str | None:
    """The C++ compiler nvcc should use as its host compiler."""
    if windows:
        return which("cl")
    return which("g++") or which("c++")


def find_driver_library(
    exists: Callable[[Path], bool] = Path.exists, run: Run = run_text
) -> Path | None:
    """The NVIDIA driver's libcuda.so.1 (Linux), for linking CUDA's virtual memory calls."""
    try:
        listing = run(["ldconfig", "-p"])
    except (OSError, subprocess.SubprocessError):
        listing = ""
    entries = [line.strip() for line in listing.splitlines()]
    entries = [e for e in entries if e.startswith("libcuda.so.1 ")]
    entries.sort(key=lambda e: "64" not in e.split("=>")[0])  # 64-bit entries first
    for entry in entries:
        path = Path(entry.rsplit("=>", 1)[-1].strip())
        if exists(path):
            return path
    for folder in ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib/wsl/lib", "/usr/lib"):
        path = Path(folder) / "libcuda.so.1"
        if exists(path):
            return path
    return None


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:2])


def major(version: str) -> int:
    """13 from '13.0'."""
    return _version_tuple(version)[0]
