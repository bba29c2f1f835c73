"""`engine install --cuda` planning: toolkit choice, CMake flags, environment, and what stops it."""

from __future__ import annotations

from pathlib import Path

import pytest
from cards import card
from fake_nvml import FakeCard, FakeNvml

from gptoss_local.engine_setup import toolkit
from gptoss_local.engine_setup.plan import make_plan, parse_archs, requirement_for
from gptoss_local.engine_setup.spec import Machine, Target
from gptoss_local.hardware.machine import Hardware, probe

TOOLS = {"g++": "/usr/bin/g++", "gcc": "/usr/bin/gcc"}


def target(tmp_path: Path, installed: str | None = "0.3.36", pip: bool = True) -> Target:
    site = tmp_path / "venv/lib/python3.11/site-packages"
    return Target("/venv/bin/python", str(tmp_path / "venv"), str(site), "3.11", installed, pip)


def pc(cards: list[FakeCard], cuda: int = 13000) -> Hardware:
    return probe(FakeNvml(cards, cuda=cuda), models_path=Path("/"))


def machine(tools: dict[str, str] | None = None, **kwargs) -> Machine:
    tools = TOOLS if tools is None else tools
    defaults = {
        "windows": False, "supported": True, "env": {"PATH": "/usr/bin"},
        "which": tools.get, "run": lambda argv: "Cuda compilation tools, release 12.4, V12.4.1",
        "driver_library": lambda: Path("/usr/lib/x86_64-linux-gnu/libcuda.so.1"), "cpu_count": 8,
        "usual_cuda": (),
    }  # fmt: skip
    return Machine(**{**defaults, **kwargs})


def system_cuda(tmp_path: Path) -> Path:
    root = tmp_path / "cuda-12.4"
    (root / "bin").mkdir(parents=True)
    (root / "include").mkdir()
    (root / "bin/nvcc").write_text("")
    (root / "include/cuda_runtime.h").write_text("")
    return root


def test_no_toolkit_uses_nvidias_pip_packages_in_the_target_environment(tmp_path: Path) -> None:
    plan = make_plan(target(tmp_path), pc([card("4090")]), machine=machine())
    tree = Path(plan.target.platlib) / "nvidia/cu13"
    assert plan.problems == [] and plan.toolkit == "pip" and plan.archs == ("89",)
    assert [s.kind for s in plan.steps] == ["toolkit", "build", "check"]
    install = plan.steps[0].argv
    assert install[:4] == ("/venv/bin/python", "-m", "pip", "install")
    assert set(toolkit.PIP_PACKAGES) <= set(install)
    args = plan.cmake_args
    assert "-DGGML_CUDA=on" in args and "-DCMAKE_CUDA_ARCHITECTURES=89" in args
    assert f"-DCMAKE_CUDA_COMPILER={tree}/bin/nvcc" in args
    assert f"-DCUDA_cublas_LIBRARY={tree}/lib/libcublas.so.13" in args
    assert "-DCUDA_cuda_driver_LIBRARY=/usr/lib/x86_64-linux-gnu/libcuda.so.1" in args
    assert "-DCMAKE_CUDA_HOST_COMPILER=/usr/bin/g++" in args
    assert f"-DCMAKE_SHARED_LINKER_FLAGS=-Wl,-rpath,{tree}/lib" in args
    env = plan.env
    assert env["CUDACXX"] == f"{tree}/bin/nvcc" and env["CUDA_PATH"] == str(tree)
    assert env["PATH"].startswith(f"{tree}/bin") and env["LIBRARY_PATH"] == f"{tree}/lib"
    assert env["CMAKE_ARGS"] == " ".join(args) and env["CMAKE_BUILD_PARALLEL_LEVEL"] == "8"
    build = plan.steps[1]
    assert build.env == env
    assert "--no-cache-dir" in build.argv and "--force-reinstall" in build.argv
    assert build.argv[-1] == "llama-cpp-python==0.3.36"  # the installed version, rebuilt
    assert "--no-deps" in build.argv  # numpy & co. stay as they are


def test_an_environment_without_the_engine_gets_its_dependencies_too(tmp_path: Path) -> None:
    plan = make_plan(target(tmp_path, installed=None), pc([card("4090")]), machine=machine())
    build = plan.steps[1].argv
    assert "--no-deps" not in build and build[-1] == "llama-cpp-python>=0.3.36,<0.4"


def test_without_the_driver_library_the_build_skips_cuda_vmm(tmp_path: Path) -> None:
    plan = make_plan(target(tmp_path), pc([]), "89", machine=machine(driver_library=lambda: None))
    assert "-DGGML_CUDA_NO_VMM=ON" in plan.cmake_args
    assert any("GGML_CUDA_NO_VMM" in note for note in plan.notes)


def test_a_system_toolkit_that_can_build_the_arch_is_used(tmp_path: Path) -> None:
    root = system_cuda(tmp_path)
    plan = make_plan(
        target(tmp_path), pc([card("3060")]), machine=machine(env={"CUDA_PATH": str(root)})
    )
    assert plan.problems == [] and plan.toolkit == "system" and plan.cuda_version == "12.4"
    assert [s.kind for s in plan.steps] == ["build", "check"]  # nothing from pip
    assert f"-DCMAKE_CUDA_COMPILER={root}/bin/nvcc" in plan.cmake_args
    assert "-DCMAKE_CUDA_ARCHITECTURES=86" in plan.cmake_args


def test_a_system_toolkit_too_old_for_the_card_falls_back_to_pip(tmp_path: Path) -> None:
    root = system_cuda(tmp_path)  # CUDA 12.4 cannot build sm_120
    plan = make_plan(
        target(tmp_path), pc([card("5090")]), machine=machine(env={"CUDA_PATH": str(root)})
    )
    assert plan.toolkit == "pip" and plan.archs == ("120",) and plan.problems == []
    assert any("cannot build for compute 120" in note for note in plan.notes)
    forced = make_plan(
        target(tmp_path), pc([card("5090")]), choice="system",
        machine=machine(env={"CUDA_PATH": str(root)}),
    )  # fmt: skip
    assert any("cannot build for compute 120" in p for p in forced.problems)


def test_a_wrapper_script_on_path_is_not_a_toolkit(tmp_path: Path) -> None:
    wrapper = tmp_path / "bin/nvcc"
    wrapper.parent.mkdir()
    wrapper.write_text('#!/bin/sh\nexec /elsewhere/nvcc "$@"\n')
    found = toolkit.find_system_toolkit({}, {"nvcc": str(wrapper)}.get, windows=True)
    assert found is None


def test_no_gpu_and_no_arch_says_to_give_one(tmp_path: Path) -> None:
    plan = make_plan(target(tmp_path), pc([]), machine=machine())
    assert any("--arch" in p and "RTX 40: 89" in p for p in plan.problems)
    assert make_plan(target(tmp_path), pc([]), "8.9", machine=machine()).problems == []


def test_every_distinct_gpu_architecture_is_built(tmp_path: Path) -> None:
    plan = make_plan(
        target(tmp_path), pc([card("3060"), card("5090"), card("3080")]), machine=machine()
    )
    assert plan.archs == ("86", "120")
    assert "-DCMAKE_CUDA_ARCHITECTURES=86;120" in plan.cmake_args


@pytest.mark.parametrize(
    ("text", "archs"),
    [("89", ("89",)), ("8.9", ("89",)), ("12.0", ("120",)), ("86, 89", ("86", "89"))],
)
def test_parse_archs(text: str, archs: tuple[str, ...]) -> None:
    assert parse_archs(text) == archs


@pytest.mark.parametrize("bad", ["sm_89", "native", "8", "8.9.1"])
def test_parse_archs_refuses_other_text(bad: str) -> None:
    with pytest.raises(ValueError, match="compute capability"):
        parse_archs(bad)


def test_a_bad_arch_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    plan = make_plan(target(tmp_path), pc([]), "sm_89", machine=machine())
    assert any(p.startswith("--arch:") for p in plan.problems)


def test_an_old_driver_cannot_run_pips_cuda_13(tmp_path: Path) -> None:
    plan = make_plan(target(tmp_path), pc([card("4090")], cuda=12040), machine=machine())
    assert any("supports CUDA 12.4" in p and "580" in p for p in plan.problems)


def test_a_card_older_than_turing_cannot_use_pips_cuda_13(tmp_path: Path) -> None:
    plan = make_plan(target(tmp_path), pc([card("gt1030")]), machine=machine())
    assert any("Compute 61" in p and "CUDA 12 toolkit" in p for p in plan.problems)


def test_missing_compiler_names_the_package_per_os(tmp_path: Path) -> None:
    linux = make_plan(target(tmp_path), pc([card("4090")]), machine=machine(tools={}))
    assert any("gcc/g++ not found" in p and "build-essential" in p for p in linux.problems)
    windows = make_plan(
        target(tmp_path), pc([card("4090")]), machine=machine(tools={}, windows=True)
    )
    assert any("cl.exe" in p and "Visual Studio Build Tools" in p for p in windows.problems)


def test_windows_links_against_the_import_libraries(tmp_path: Path) -> None:
    plan = make_plan(
        target(tmp_path), pc([card("4090")]), machine=machine(tools={"cl": "cl.exe"}, windows=True)
    )
    assert plan.problems == []
    assert any(a.endswith("nvidia/cu13/lib/x64/cudart.lib") for a in plan.cmake_args)
    assert not any("HOST_COMPILER" in a or "NO_VMM" in a for a in plan.cmake_args)
    assert "LIBRARY_PATH" not in plan.env


def test_macos_has_no_cuda(tmp_path: Path) -> None:
    plan = make_plan(target(tmp_path), pc([]), "89", machine=machine(supported=False))
    assert any("Linux and Windows" in p for p in plan.problems)


def test_an_environment_without_pip_is_a_problem(tmp_path: Path) -> None:
    plan = make_plan(target(tmp_path, pip=False), pc([card("4090")]), machine=machine())
    assert any("pip is not available" in p for p in plan.problems)


def test_requirement_keeps_an_accepted_version_else_the_range() -> None:
    assert requirement_for("0.3.36") == "llama-cpp-python==0.3.36"
    assert requirement_for("0.2.90") == "llama-cpp-python>=0.3.36,<0.4"
    assert requirement_for(None) == "llama-cpp-python>=0.3.36,<0.4"


def test_arch_support_by_toolkit_version() -> None:
    assert toolkit.arch_supported(120, "12.8") and not toolkit.arch_supported(120, "12.6")
    assert not toolkit.arch_supported(61, "13.0") and toolkit.arch_supported(61, "12.4")
    assert toolkit.arch_supported(89, None)


def test_driver_library_from_ldconfig_prefers_64_bit() -> None:
    listing = (
        "\tlibcuda.so.1 (libc6) => /usr/lib/i386-linux-gnu/libcuda.so.1\n"
        "\tlibcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1\n"
        "\tlibcuda.so (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so\n"
    )
    found = toolkit.find_driver_library(lambda p: True, lambda argv: listing)
    assert found == Path("/usr/lib/x86_64-linux-gnu/libcuda.so.1")
    assert toolkit.find_driver_library(lambda p: False, lambda argv: listing) is None


def test_windows_pip_toolkit_makes_cublas_import_libraries_and_builds_with_ninja(
    tmp_path: Path,
) -> None:
    plan = make_plan(
        target(tmp_path), pc([card("4090")]), machine=machine(tools={"cl": "cl.exe"}, windows=True)
    )
    tree = f"{plan.target.platlib}/nvidia/cu13"
    implib = f"{tmp_path}/venv/gptoss-local-cuda/lib"
    assert [s.kind for s in plan.steps] == ["toolkit", "implib", "build", "check"]
    make = plan.steps[1].argv
    assert make[1:3] == ("-m", "gptoss_local.engine_setup.implib") and implib in make
    assert f"cublas={tree}/bin/x86_64/cublas64_13.dll" in make
    assert f"-DCUDA_cublas_LIBRARY={implib}/cublas.lib" in plan.cmake_args
    assert f"-DCUDA_cudart_LIBRARY={tree}/lib/x64/cudart.lib" in plan.cmake_args
    assert f"-DCUDA_cuda_driver_LIBRARY={tree}/lib/x64/cuda.lib" in plan.cmake_args
    assert plan.env["CMAKE_GENERATOR"] == "Ninja"
    assert plan.cuda_lib_dirs == (f"{tree}/bin/x86_64",)


@pytest.mark.parametrize(
    ("answer", "warned"), [("libstdc++.so", True), ("/usr/lib/gcc/x86_64/13/libstdc++.so", False)]
)
def test_a_compiler_with_only_the_static_libstdcxx_is_named(
    tmp_path: Path, answer: str, warned: bool
) -> None:
    asked: list[list[str]] = []

    def run(argv: list[str]) -> str:
        asked.append(argv)
        return answer + "\n" if argv[-1] == "-print-file-name=libstdc++.so" else "release 12.4"

    env = {"PATH": "/usr/bin", "CXX": "/opt/gcc/bin/g++"}
    plan = make_plan(target(tmp_path), pc([card("4090")]), machine=machine(run=run, env=env))
    assert ["/opt/gcc/bin/g++", "-print-file-name=libstdc++.so"] in asked  # CXX, as CMake
    notes = [n for n in plan.notes if "only the static libstdc++" in n]
    assert bool(notes) is warned and plan.problems == []
    assert not notes or "/opt/gcc/bin/g++" in notes[0]
