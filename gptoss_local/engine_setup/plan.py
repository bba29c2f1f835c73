"""The plan of a CUDA rebuild of llama-cpp-python: which environment, toolkit, flags and steps.

`make_plan()` only looks (it changes nothing), so `engine install --dry-run` prints exactly what
`engine install` would run. The environment rebuilt is the one of a Python interpreter: by
default the one running gptoss-local (pipx's venv), or `--python`.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gptoss_local.engine_setup import toolkit
from gptoss_local.engine_setup.toolkit import PipToolkit, Run, SystemToolkit, Which
from gptoss_local.hardware.engine import DISTRIBUTION, REQUIREMENT
from gptoss_local.hardware.machine import Hardware

ToolkitChoice = str  # "auto", "system" or "pip"
_ARCH = re.compile(r"^(\d{2,3})$|^(\d{1,2})\.(\d)$")
_INSPECT = r"""
import json, sys, sysconfig, importlib.util
from importlib.metadata import version, PackageNotFoundError
try:
    installed = version("llama-cpp-python")
except PackageNotFoundError:
    installed = None
print(json.dumps({"prefix": sys.prefix, "platlib": sysconfig.get_paths()["platlib"],
    "python": "%d.%d" % sys.version_info[:2], "llama_cpp_python": installed,
    "pip": importlib.util.find_spec("pip") is not None}))
"""


@dataclass(frozen=True)
class Target:
    """The Python environment to rebuild llama-cpp-python in."""

    python: str
    prefix: str
    platlib: str
    python_version: str
    installed: str | None  # llama-cpp-python's version there
    has_pip: bool


@dataclass(frozen=True)
class Step:
    """One command of the plan. `env` holds only what it sets on top of the environment."""

    kind: str  # "toolkit", "build" or "check"
    title: str
    argv: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)


@dataclass
class InstallPlan:
    """Everything `engine install --cuda` will do, and what stops it."""

    target: Target
    archs: tuple[str, ...]
    arch_source: str
    toolkit: str  # "system" or "pip"
    toolkit_detail: str
    cuda_version: str | None
    requirement: str
    cmake_args: tuple[str, ...]
    env: dict[str, str]
    steps: list[Step]
    problems: list[str]
    notes: list[str]
    cuda_lib_dirs: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON output."""
        return asdict(self)


def inspect_target(python: str, run: Run = toolkit.run_text) -> Target:
    """Ask the interpreter `python` where its environment is and what it has installed.

    Raises:
        OSError, subprocess.SubprocessError, ValueError: when it does not run or answer.
    """
    data = json.loads(run([python, "-c", _INSPECT]).strip().splitlines()[-1])
    return Target(
        python,
        data["prefix"],
        data["platlib"],
        data["python"],
        data["llama_cpp_python"],
        bool(data["pip"]),
    )


def parse_archs(text: str) -> tuple[str, ...]:
    """'89', '8.9' or '86,89' → ('89',) / ('86', '89'); ValueError for anything else."""
    archs = []
    for part in re.split(r"[,;\s]+", text.strip()):
        match = _ARCH.match(part)
        if not match:
            raise ValueError(f"not a compute capability: {part!r} (examples: 89, 8.9, 120)")
        archs.append(match.group(1) or match.group(2) + match.group(3))
    return tuple(dict.fromkeys(archs))


def gpu_archs(hardware: Hardware) -> tuple[str, ...]:
    """The compute capabilities of the GPUs NVML found, as CMake wants them ('89')."""
    found = [g.compute_capability for g in hardware.gpus if g.compute_capability]
    return tuple(dict.fromkeys(cc.replace(".", "") for cc in found))


def requirement_for(installed: str | None) -> str:
    """Rebuild the installed version when gptoss-local accepts it, else the accepted range."""
    if installed and _accepted(installed):
        return f"{DISTRIBUTION}=={installed}"
    return REQUIREMENT


def _accepted(version: str) -> bool:
    numbers = tuple(int(n) for n in re.findall(r"\d+", version)[:3])
    return (0, 3, 36) <= numbers < (0, 4)


@dataclass(frozen=True)
class Machine:
    """How the plan sees this PC: injectable for tests of other OSes."""

    windows: bool = sys.platform == "win32"
    supported: bool = sys.platform == "win32" or sys.platform.startswith("linux")
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    which: Which | None = None
    run: Run = toolkit.run_text
    driver_library: Callable[[], Path | None] = toolkit.find_driver_library
    cpu_count: int = os.cpu_count() or 1
    usual_cuda: tuple[str, ...] = ("/usr/local/cuda",)

    def find(self, name: str) -> str | None:
        """`shutil.which`, or the injected one."""
        import shutil

        return self.which(name) if self.which else shutil.which(name)


def make_plan(
    target: Target,
    hardware: Hardware,
    arch: str | None = None,
    choice: ToolkitChoice = "auto",
    machine: Machine | None = None,
) -> InstallPlan:
    """Decide how to rebuild llama-cpp-python with CUDA; looks only, changes nothing.

    Args:
        target: The environment to rebuild in (`inspect_target`).
        hardware: What `hardware.probe()` found (GPUs, their compute capability, the driver).
        arch: `--arch`; None takes the GPUs' compute capabilities.
        choice: "system" (installed CUDA toolkit), "pip" (NVIDIA's packages) or "auto".
        machine: The PC's OS, environment and tools (default: this one).
    """
    machine = machine or Machine()
    problems: list[str] = []
    notes: list[str] = []
    archs, arch_source = _archs(hardware, arch, problems)
    if not machine.supported:
        problems.append("CUDA builds are for Linux and Windows; this OS has no CUDA.")
    if not target.has_pip:
        problems.append(
            f"pip is not available in {target.python}'s environment. With pipx: "
            "`pipx runpip gptoss-local --version` should work; otherwise reinstall gptoss-local."
        )
    compiler = toolkit.compiler_problem(machine.windows, machine.find)
    if compiler:
        problems.append(compiler)
    system = toolkit.find_system_toolkit(
        machine.env, machine.find, machine.run, machine.windows, machine.usual_cuda
    )
    kind = _choose_toolkit(choice, system, archs, hardware, problems, notes)
    plan = InstallPlan(
        target=target,
        archs=archs,
        arch_source=arch_source,
        toolkit=kind,
        toolkit_detail="",
        cuda_version=None,
        requirement=requirement_for(target.installed),
        cmake_args=(),
        env={},
        steps=[],
        problems=problems,
        notes=notes,
    )
    if kind == "pip":
        _pip_toolkit(plan, machine)
    elif system is not None:
        _system_toolkit(plan, system, machine)
    plan.steps += _build_and_check(plan, machine)
    return plan


def _archs(
    hardware: Hardware, arch: str | None, problems: list[str]
) -> tuple[tuple[str, ...], str]:
    if arch:
        try:
            return parse_archs(arch), "--arch"
        except ValueError as exc:
            problems.append(f"--arch: {exc}")
            return (), "--arch"
    found = gpu_archs(hardware)
    if found:
        names = ", ".join(f"{g.name} (compute {g.compute_capability})" for g in hardware.gpus)
        return found, names
    why = hardware.nvml_error or "NVML reported no devices"
    problems.append(
        f"No NVIDIA GPU found ({why}), so its architecture is unknown: give it with --arch "
        "(RTX 20: 75, RTX 30: 86, RTX 40: 89, RTX 50 / RTX PRO Blackwell: 120)."
    )
    return (), "no GPU"


def _choose_toolkit(
    choice: ToolkitChoice,
    system: SystemToolkit | None,
    archs: tuple[str, ...],
    hardware: Hardware,
    problems: list[str],
    notes: list[str],
) -> str:
    can_build = system is not None and all(
        toolkit.arch_supported(int(a), system.version) for a in archs
    )
    if choice == "system" or (choice == "auto" and can_build):
        if system is None:
            problems.append(
                "No CUDA toolkit found (nvcc under CUDA_PATH, on PATH or in "
                "/usr/local/cuda): leave out --toolkit system to use pip's."
            )
        elif not can_build:
            problems.append(
                f"CUDA {system.version} at {system.root} cannot build for "
                f"compute {', '.join(archs)}: update it, or use --toolkit pip."
            )
        return "system"
    if choice == "auto" and system is not None:
        notes.append(
            f"CUDA {system.version} at {system.root} cannot build for compute "
            f"{', '.join(archs)}: using NVIDIA's pip packages instead."
        )
    _check_pip_toolkit(archs, hardware, problems)
    return "pip"


def _check_pip_toolkit(archs: tuple[str, ...], hardware: Hardware, problems: list[str]) -> None:
    old = [a for a in archs if int(a) < toolkit.PIP_MIN_ARCH]
    if old:
        problems.append(
            f"Compute {', '.join(old)} is older than CUDA 13 supports (7.5, RTX 20): pip has "
            "no CUDA 12 compiler, so install the CUDA 12 toolkit and use --toolkit system."
        )
    driver = hardware.cuda_driver_version
    if driver and toolkit.major(driver) < 13:
        problems.append(
            f"The NVIDIA driver {hardware.driver_version} supports CUDA {driver}; pip's CUDA "
            f"compiler is CUDA {toolkit.PIP_CUDA_VERSION}, which needs a driver of the 580 "
            "series or newer. Update the driver, or install the CUDA 12 toolkit and use "
            "--toolkit system (pip's CUDA 12 packages have no compiler)."
        )


def _pip_toolkit(plan: InstallPlan, machine: Machine) -> None:
    tree = PipToolkit(Path(plan.target.platlib) / "nvidia" / "cu13", machine.windows)
    version = toolkit.PIP_CUDA_VERSION
    plan.toolkit_detail = f"NVIDIA's pip packages (CUDA {version}) in {tree.root}"
    plan.cuda_version = toolkit.PIP_CUDA_VERSION
    plan.cuda_lib_dirs = (str(tree.dll_dir if machine.windows else tree.lib_dir),)
    implib = Path(plan.target.prefix) / "gptoss-local-cuda" / "lib" if machine.windows else None
    args = [
        f"-DCUDAToolkit_ROOT={_p(tree.root)}",
        f"-DCUDA_CUDART={_p(tree.library('cudart'))}",
        f"-DCUDA_cudart_LIBRARY={_p(tree.library('cudart'))}",
        f"-DCUDA_cublas_LIBRARY={_p(tree.library('cublas', implib))}",
        f"-DCUDA_cublasLt_LIBRARY={_p(tree.library('cublasLt', implib))}",
    ]
    if machine.windows:
        args.append(f"-DCUDA_cuda_driver_LIBRARY={_p(tree.library('cuda'))}")
    else:
        driver = machine.driver_library()
        if driver is not None:
            args.append(f"-DCUDA_cuda_driver_LIBRARY={_p(driver)}")
        else:
            args.append("-DGGML_CUDA_NO_VMM=ON")
            plan.notes.append(
                "No NVIDIA driver library (libcuda.so.1) here: built without CUDA virtual "
                "memory (GGML_CUDA_NO_VMM), which costs a little memory efficiency."
            )
    plan.cmake_args = _common_args(plan, tree.nvcc, machine) + tuple(args)
    env = {"CUDACXX": str(tree.nvcc), "CUDA_PATH": str(tree.root), "CUDA_HOME": str(tree.root)}
    env["PATH"] = os.pathsep.join([str(tree.nvcc.parent), machine.env.get("PATH", "")])
    if not machine.windows:  # nvcc links its test programs with -lcudart_static from here
        env["LIBRARY_PATH"] = os.pathsep.join(
            p for p in (str(tree.lib_dir), machine.env.get("LIBRARY_PATH", "")) if p
        )
    plan.env = _with_build_env(plan, env, machine)
    install = (plan.target.python, "-m", "pip", "install", *toolkit.PIP_PACKAGES)
    title = "Install NVIDIA's CUDA compiler and libraries (pip)"
    plan.steps.append(Step("toolkit", title, install))
    if implib is not None:
        dlls = [f"{name}={tree.dll_dir / f'{name}64_13.dll'}" for name in ("cublas", "cublasLt")]
        make = (sys.executable, "-m", "gptoss_local.engine_setup.implib", "--out", str(implib))
        title = "Make cuBLAS import libraries (MSVC's dumpbin and lib)"
        plan.steps.append(Step("implib", title, (*make, *dlls)))


def _system_toolkit(plan: InstallPlan, system: SystemToolkit, machine: Machine) -> None:
    plan.toolkit_detail = f"CUDA {system.version or '?'} at {system.root}"
    plan.cuda_version = system.version
    plan.cmake_args = _common_args(plan, system.nvcc, machine)
    env = {"CUDACXX": str(system.nvcc), "CUDA_PATH": str(system.root)}
    plan.env = _with_build_env(plan, env, machine)


def _common_args(plan: InstallPlan, nvcc: Path, machine: Machine) -> tuple[str, ...]:
    args = [
        "-DGGML_CUDA=on",
        f"-DCMAKE_CUDA_ARCHITECTURES={';'.join(plan.archs) or '?'}",
        f"-DCMAKE_CUDA_COMPILER={_p(nvcc)}",
    ]
    host = toolkit.cxx_compiler(machine.windows, machine.find)
    if host and not machine.windows:
        args.append(f"-DCMAKE_CUDA_HOST_COMPILER={_p(Path(host))}")
    return tuple(args)


def _with_build_env(plan: InstallPlan, env: dict[str, str], machine: Machine) -> dict[str, str]:
    env["CMAKE_ARGS"] = " ".join(_quote(a) for a in plan.cmake_args)
    env["CMAKE_BUILD_PARALLEL_LEVEL"] = str(machine.cpu_count)
    if machine.windows:
        # Visual Studio's generator needs CUDA's MSBuild files, which only the CUDA installer
        # puts in place; Ninja needs only nvcc and cl (scikit-build-core brings Ninja).
        env["CMAKE_GENERATOR"] = "Ninja"
    return env


def _build_and_check(plan: InstallPlan, machine: Machine) -> list[Step]:
    build = (
        plan.target.python,
        "-m",
        "pip",
        "install",
        "--verbose",
        "--force-reinstall",
        "--no-deps",
        "--no-cache-dir",
        "--no-binary",
        DISTRIBUTION,
        plan.requirement,
    )
    what = f"CUDA, compute {', '.join(plan.archs) or '?'}"
    return [
        Step("build", f"Build {DISTRIBUTION} ({what})", build, plan.env),
        Step("check", "Check that it loads and offloads to the GPU", (plan.target.python,)),
    ]


def _p(path: Path) -> str:
    """A path as CMake wants it (forward slashes, also on Windows)."""
    return path.as_posix()


def _quote(arg: str) -> str:
    return f'"{arg}"' if " " in arg else arg
