"""CMake flags and build environment for each toolkit: the CUDA parts of an install plan."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from gptoss_local.engine_setup import toolkit
from gptoss_local.engine_setup.spec import InstallPlan, Machine, Step
from gptoss_local.engine_setup.toolkit import PipToolkit, SystemToolkit
from gptoss_local.i18n import _


def pip_toolkit(plan: InstallPlan, machine: Machine) -> None:
    """Fill in the plan for NVIDIA's CUDA 13 pip packages, installed into the target first.

    The wheels have no unversioned `.so` and keep libraries in `lib/` where nvcc looks in
    `lib64/`, so CMake gets each library by full path and nvcc gets LIBRARY_PATH.
    """
    tree = PipToolkit(Path(plan.target.platlib) / "nvidia" / "cu13", machine.windows)
    version = toolkit.PIP_CUDA_VERSION
    plan.toolkit_detail = _("NVIDIA's pip packages (CUDA {version}) in {root}").format(
        version=version, root=tree.root
    )
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
                _(
                    "No NVIDIA driver library (libcuda.so.1) here: built without CUDA virtual "
                    "memory (GGML_CUDA_NO_VMM), which costs a little memory efficiency."
                )
            )
        # llama-cpp-python sets its libraries' RUNPATH to $ORIGIN only; this puts the pip
        # CUDA folder in front, so `import llama_cpp` works outside gptoss-local too.
        if " " not in str(tree.lib_dir):
            args.append(f"-DCMAKE_SHARED_LINKER_FLAGS=-Wl,-rpath,{_p(tree.lib_dir)}")
    plan.cmake_args = _common_args(plan, tree.nvcc, machine) + tuple(args)
    env = {"CUDACXX": str(tree.nvcc), "CUDA_PATH": str(tree.root), "CUDA_HOME": str(tree.root)}
    env["PATH"] = os.pathsep.join([str(tree.nvcc.parent), machine.env.get("PATH", "")])
    if not machine.windows:  # nvcc links its test programs with -lcudart_static from here
        env["LIBRARY_PATH"] = os.pathsep.join(
            p for p in (str(tree.lib_dir), machine.env.get("LIBRARY_PATH", "")) if p
        )
    plan.env = _with_build_env(plan, env, machine)
    install = (plan.target.python, "-m", "pip", "install", *toolkit.PIP_PACKAGES)
    title = _("Install NVIDIA's CUDA compiler and libraries (pip)")
    plan.steps.append(Step("toolkit", title, install))
    if implib is not None:
        dlls = [f"{name}={tree.dll_dir / f'{name}64_13.dll'}" for name in ("cublas", "cublasLt")]
        make = (sys.executable, "-m", "gptoss_local.engine_setup.implib", "--out", str(implib))
        title = _("Make cuBLAS import libraries (MSVC's dumpbin and lib)")
        plan.steps.append(Step("implib", title, (*make, *dlls)))


def system_toolkit(plan: InstallPlan, system: SystemToolkit, machine: Machine) -> None:
    """Fill in the plan for a CUDA toolkit installed on the PC: CMake finds the rest itself."""
    plan.toolkit_detail = _("CUDA {version} at {root}").format(
        version=system.version or "?", root=system.root
    )
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
        compiler = machine.env.get("CXX") or host  # what CMake builds the C++ with
        if _static_libstdcxx_only(compiler, machine):
            plan.notes.append(
                _(
                    "The C++ compiler {compiler} has only the static libstdc++: each library of "
                    "the engine would carry a copy of its own, which can crash llama.cpp while "
                    "it loads a model. If the engine crashes, install again with CXX set to a "
                    "compiler that has the shared libstdc++ (the system's g++)."
                ).format(compiler=compiler)
            )
    return tuple(args)


def _static_libstdcxx_only(compiler: str, machine: Machine) -> bool:
    """Whether `compiler` finds no shared libstdc++ (it answers the bare name when it has
    none): a GCC built with only the archive. Two copies of libstdc++ in one process crashed
    llama.cpp's std::regex on the GPU machine (bench/RESULTS.md, one card as a device list)."""
    try:
        found = machine.run([compiler, "-print-file-name=libstdc++.so"]).strip()
    except (OSError, subprocess.SubprocessError):
        return False  # a compiler that does not answer: the build will say what is wrong
    return found == "libstdc++.so"


def _with_build_env(plan: InstallPlan, env: dict[str, str], machine: Machine) -> dict[str, str]:
    env["CMAKE_ARGS"] = " ".join(_quote(a) for a in plan.cmake_args)
    env["CMAKE_BUILD_PARALLEL_LEVEL"] = str(machine.cpu_count)
    if machine.windows:
        # Visual Studio's generator needs CUDA's MSBuild files, which only the CUDA installer
        # puts in place; Ninja needs only nvcc and cl (scikit-build-core brings Ninja).
        env["CMAKE_GENERATOR"] = "Ninja"
    return env


def _p(path: Path) -> str:
    """A path as CMake wants it (forward slashes, also on Windows)."""
    return path.as_posix()


def _quote(arg: str) -> str:
    return f'"{arg}"' if " " in arg else arg
