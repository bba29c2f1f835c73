"""`gptoss-local engine` and `engine install --cuda --dry-run`, and the CPU-only advice."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from cards import card
from fake_nvml import FakeNvml

from gptoss_local.cli import main
from gptoss_local.engine_setup import advice
from gptoss_local.hardware import machine as hardware
from gptoss_local.hardware.engine import EngineStatus
from gptoss_local.launch import text as launch_text

CPU_ONLY = EngineStatus(True, "0.3.36", False, ("CPU",))
CUDA = EngineStatus(True, "0.3.36", True, ("CUDA", "CPU"))


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def no_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hardware, "load_nvml", lambda: FakeNvml([], init_error=12))


def test_engine_report_text_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "engine")
    assert code == 0 and out.startswith("llama-cpp-python 0.3.")
    assert "GPU offload" in out and "backends" in out
    code, out, _ = run(capsys, "engine", "--json")
    report = json.loads(out)
    assert code == 0 and set(report) == {
        "python", "environment", "llama_cpp_python", "gpu_offload", "backends", "cuda",
        "system_info",
    }  # fmt: skip
    assert report["python"] == sys.executable and report["llama_cpp_python"]["installed"]
    assert set(report["cuda"]) == {
        "built", "archs", "runtime", "libraries", "pip_library_dirs", "preloaded",
    }  # fmt: skip
    assert report["cuda"]["built"] == ("CUDA" in report["backends"])
    assert "CPU" in report["system_info"]


def test_install_needs_cuda(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "engine", "install")
    assert code == 2 and "engine install --cuda" in err


def test_dry_run_prints_the_plan_and_changes_nothing(
    capsys: pytest.CaptureFixture[str], no_gpu: None, isolated_home: Path
) -> None:
    argv = ("engine", "install", "--cuda", "--arch", "89", "--toolkit", "pip", "--dry-run")
    code, out, _ = run(capsys, *argv)
    assert code == 0, out
    assert f"Environment   {sys.prefix}" in out and "Architecture  89  (from --arch)" in out
    assert "nvidia-cuda-nvcc==13.0.*" in out and "-DCMAKE_CUDA_ARCHITECTURES=89" in out
    assert out.rstrip().endswith("(--dry-run: nothing was changed)")
    assert not (isolated_home / "logs").exists()  # no log: nothing ran
    code, out, _ = run(capsys, *argv, "--json")
    plan = json.loads(out)
    assert code == 0 and plan["toolkit"] == "pip" and plan["archs"] == ["89"]
    assert [s["kind"] for s in plan["steps"]] == ["toolkit", "build", "check"]


def test_without_gpu_or_arch_it_cannot_start(
    capsys: pytest.CaptureFixture[str], no_gpu: None
) -> None:
    code, out, _ = run(capsys, "engine", "install", "--cuda", "--dry-run")
    assert code == 2 and "Cannot start" in out and "--arch" in out


def test_another_interpreter_that_does_not_run_is_an_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = run(capsys, "engine", "install", "--cuda", "--python", str(tmp_path / "nope"))
    assert code == 2 and "Could not ask" in err


def test_advice_needs_a_gpu_and_a_cpu_only_engine(tmp_path: Path) -> None:
    gpu = hardware.probe(FakeNvml([card("4090")]), models_path=tmp_path)
    none = hardware.probe(FakeNvml([], init_error=12), models_path=tmp_path)
    text = advice.gpu_engine_advice(gpu, CPU_ONLY, ollama_installed=False)
    assert text is not None and "CPU-only" in text and "gptoss-local engine install --cuda" in text
    assert "ollama" not in text
    with_ollama = advice.gpu_engine_advice(gpu, CPU_ONLY, ollama_installed=True)
    assert with_ollama is not None and with_ollama.endswith("--backend ollama.")
    assert advice.gpu_engine_advice(gpu, CUDA, True) is None
    unusable = EngineStatus(True, "0.3.36", False, ("CUDA", "CPU"))
    text = advice.gpu_engine_advice(gpu, unusable, False)
    assert text is not None and "CUDA built in but cannot use the NVIDIA GPU" in text
    assert advice.gpu_engine_advice(none, CPU_ONLY, True) is None


def test_check_engine_does_not_load_the_engine_without_a_gpu(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom() -> EngineStatus:
        raise AssertionError("engine loaded")

    monkeypatch.setattr(advice, "engine_status", boom)
    assert advice.check_engine(hardware.probe(FakeNvml([]), models_path=tmp_path)) is None


def test_first_run_facts_carry_the_advice(tmp_path: Path) -> None:
    gpu = hardware.probe(FakeNvml([card("4090")]), models_path=tmp_path)
    plain = launch_text.hardware_lines(gpu)
    lines = launch_text.hardware_lines(gpu, advice.gpu_engine_advice(gpu, CPU_ONLY, True))
    assert lines[: len(plain)] == plain
    assert lines[len(plain)].startswith("! This llama-cpp-python build is CPU-only")
    assert lines[-2] == "  Rebuild it for your GPU: `gptoss-local engine install --cuda` (add " \
        "--dry-run to see the plan first)."  # fmt: skip
    assert lines[-1] == "  Or use Ollama, which is installed here: --backend ollama."


def test_the_cuda_runtime_loaded_is_read_from_the_process_maps(tmp_path: Path) -> None:
    from gptoss_local.engine_setup.report import loaded_cuda_libraries, runtime_version

    lib = "/venv/lib/python3.11/site-packages/nvidia/cu13/lib"
    maps = tmp_path / "maps"
    maps.write_text(
        f"7f00-7f01 r--p 00000000 fd:01 11 {lib}/libcudart.so.13\n"
        f"7f01-7f02 r-xp 00001000 fd:01 11 {lib}/libcudart.so.13\n"
        f"7f02-7f03 r--p 00000000 fd:01 12 {lib}/libcublasLt.so.13\n"
        "7f03-7f04 r--p 00000000 fd:01 13 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
        "7f04-7f05 rw-p 00000000 00:00 0 \n"
    )
    found = loaded_cuda_libraries(maps)
    assert found == [f"{lib}/libcudart.so.13", f"{lib}/libcublasLt.so.13"]
    assert loaded_cuda_libraries(tmp_path / "absent") == []
    assert runtime_version(None) is None and runtime_version(str(tmp_path / "nope.so")) is None
