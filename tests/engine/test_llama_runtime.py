"""The pip CUDA runtime lookup: folders in a fake site-packages, load order, Windows DLL dirs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gptoss_local.backends.llamacpp import runtime as llama_runtime
from gptoss_local.backends.llamacpp.runtime import cuda_library_dirs, preload_order, prepare


@pytest.fixture(autouse=True)
def fresh() -> None:
    llama_runtime.reset_for_tests()


def touch(base: Path, *names: str) -> None:
    for name in names:
        path = base / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")


def cu13_linux(site: Path) -> None:
    touch(
        site,
        "nvidia/cu13/lib/libcudart.so.13",
        "nvidia/cu13/lib/libcublas.so.13",
        "nvidia/cu13/lib/libcublasLt.so.13",
        "nvidia/cu13/lib/libnvblas.so.13",
        "nvidia/cu13/lib/libcudart_static.a",
    )


def cu12_linux(site: Path) -> None:
    touch(
        site,
        "nvidia/cuda_runtime/lib/libcudart.so.12",
        "nvidia/cublas/lib/libcublas.so.12",
        "nvidia/cublas/lib/libcublasLt.so.12",
        "nvidia/cublas/lib/libnvblas.so.12",
    )


def cuda_engine(site: Path) -> None:
    touch(site, "llama_cpp/lib/libllama.so", "llama_cpp/lib/libggml-cuda.so")


def test_cuda_13_layout_is_found_and_preferred_over_cuda_12(tmp_path: Path) -> None:
    cu12_linux(tmp_path)
    cu13_linux(tmp_path)
    assert cuda_library_dirs([tmp_path], "linux") == [tmp_path / "nvidia/cu13/lib"]


def test_cuda_12_layout_gives_both_package_folders(tmp_path: Path) -> None:
    cu12_linux(tmp_path)
    assert cuda_library_dirs([tmp_path], "linux") == [
        tmp_path / "nvidia/cuda_runtime/lib",
        tmp_path / "nvidia/cublas/lib",
    ]


def test_no_pip_cuda_no_folders(tmp_path: Path) -> None:
    touch(tmp_path, "nvidia/cublas/lib/libcublas.so.12")  # cuBLAS alone: no runtime, no layout
    assert cuda_library_dirs([tmp_path / "missing", tmp_path], "linux") == []


def test_later_site_folders_are_searched_too(tmp_path: Path) -> None:
    user, system = tmp_path / "user", tmp_path / "system"
    cu13_linux(system)
    assert cuda_library_dirs([user, system], "linux") == [system / "nvidia/cu13/lib"]


def test_preload_order_puts_cudart_first_then_cublaslt_then_cublas(tmp_path: Path) -> None:
    cu12_linux(tmp_path)
    order = preload_order(cuda_library_dirs([tmp_path], "linux"), "linux")
    assert [p.name for p in order] == ["libcudart.so.12", "libcublasLt.so.12", "libcublas.so.12"]


def test_prepare_loads_the_libraries_in_order_when_the_engine_is_a_cuda_build(
    tmp_path: Path,
) -> None:
    cu13_linux(tmp_path)
    cuda_engine(tmp_path)
    loaded: list[str] = []
    done = prepare([tmp_path], "linux", load=lambda p: loaded.append(Path(p).name) or p)
    assert loaded == ["libcudart.so.13", "libcublasLt.so.13", "libcublas.so.13"]
    assert [Path(p).name for p in done.loaded] == loaded and done.failures == []
    assert prepare([tmp_path], "linux", load=lambda p: loaded.append(p)) is done  # only once


def test_prepare_does_nothing_for_a_cpu_only_engine(tmp_path: Path) -> None:
    cu13_linux(tmp_path)
    touch(tmp_path, "llama_cpp/lib/libllama.so", "llama_cpp/lib/libggml-cpu.so")
    calls: list[str] = []
    done = prepare([tmp_path], "linux", load=calls.append)
    assert calls == [] and done.loaded == []


def test_a_library_that_fails_to_load_is_recorded_not_raised(tmp_path: Path) -> None:
    cu13_linux(tmp_path)
    cuda_engine(tmp_path)

    def load(path: str) -> None:
        if "cublasLt" in path:
            raise OSError("wrong ELF class")

    done = prepare([tmp_path], "linux", load=load)
    assert len(done.loaded) == 2 and "wrong ELF class" in done.failures[0]


def test_llama_cpp_lib_path_override_is_honoured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cu13_linux(tmp_path)
    elsewhere = tmp_path / "built"
    touch(elsewhere, "libggml-cuda.so")
    monkeypatch.setenv("LLAMA_CPP_LIB_PATH", str(elsewhere))
    loaded: list[str] = []
    prepare([tmp_path], "linux", load=loaded.append)
    assert len(loaded) == 3


def test_windows_adds_dll_folders_and_loads_in_order(tmp_path: Path) -> None:
    touch(
        tmp_path,
        "nvidia/cu13/bin/x86_64/cudart64_13.dll",
        "nvidia/cu13/bin/x86_64/cublas64_13.dll",
        "nvidia/cu13/bin/x86_64/cublasLt64_13.dll",
        "nvidia/cu13/bin/nvcc.exe",
        "llama_cpp/lib/ggml-cuda.dll",
        "llama_cpp/lib/llama.dll",
    )
    added: list[str] = []
    loaded: list[str] = []
    env = {"PATH": r"C:\Windows"}
    done = prepare(
        [tmp_path], "win32", load=loaded.append, add_dll_directory=added.append, environ=env
    )
    folder = str(tmp_path / "nvidia/cu13/bin/x86_64")
    assert added == [folder] == done.dll_dirs
    assert env["PATH"].startswith(folder + os.pathsep) and env["PATH"].endswith(r"C:\Windows")
    assert [Path(p).name for p in loaded] == [
        "cudart64_13.dll",
        "cublasLt64_13.dll",
        "cublas64_13.dll",
    ]


def test_windows_cuda_12_layout(tmp_path: Path) -> None:
    touch(
        tmp_path,
        "nvidia/cuda_runtime/bin/cudart64_12.dll",
        "nvidia/cublas/bin/cublas64_12.dll",
        "nvidia/cublas/bin/cublasLt64_12.dll",
    )
    dirs = cuda_library_dirs([tmp_path], "win32")
    assert dirs == [tmp_path / "nvidia/cuda_runtime/bin", tmp_path / "nvidia/cublas/bin"]
    names = [p.name for p in preload_order(dirs, "win32")]
    assert names == ["cudart64_12.dll", "cublasLt64_12.dll", "cublas64_12.dll"]


def test_the_engine_loader_prepares_before_importing(monkeypatch: pytest.MonkeyPatch) -> None:
    from gptoss_local.backends.llamacpp import native as llama_native

    calls: list[str] = []
    monkeypatch.setattr(llama_runtime, "prepare", lambda: calls.append("prepare"))
    assert llama_native.lib().llama_supports_gpu_offload is not None
    assert calls == ["prepare"]
