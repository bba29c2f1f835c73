"""The after-build check's verdicts, and reading CUDA architectures from llama.cpp's system info."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cards import card
from fake_nvml import FakeNvml

from gptoss_local.engine_setup import check
from gptoss_local.hardware.machine import Hardware, probe

INFO = (
    "CPU : SSE3 = 1 | AVX2 = 1 | CUDA : ARCHS = 890 | USE_GRAPHS = 1 | PEER_MAX_BATCH_SIZE = 128 |"
)


@pytest.fixture
def gpu(tmp_path: Path) -> Hardware:
    return probe(FakeNvml([card("4090")]), models_path=tmp_path)


@pytest.fixture
def no_gpu(tmp_path: Path) -> Hardware:
    return probe(FakeNvml([], init_error=12), models_path=tmp_path)


def test_cuda_archs_from_system_info() -> None:
    assert check.cuda_archs(INFO) == ["890"]
    assert check.cuda_archs("CUDA : ARCHS = 860,890 | USE_GRAPHS = 1 |") == ["860", "890"]
    assert check.cuda_archs("CPU : AVX2 = 1 |") == []


def test_works_when_ggml_lists_the_gpu(gpu: Hardware) -> None:
    result = {"loaded": True, "gpu_offload": True, "system_info": INFO, "devices": ["RTX 4090"]}
    assert check.judge(result, gpu) == check.Outcome(
        True, "GPU offload works (CUDA, architectures 890): RTX 4090."
    )


def test_fails_when_cuda_sees_no_device(gpu: Hardware) -> None:
    verdict = check.judge({"loaded": True, "gpu_offload": True, "devices": []}, gpu)
    assert verdict.ok is False and "sees no GPU" in verdict.message and "--arch" in verdict.message


def test_fails_when_cuda_was_not_built_in(gpu: Hardware) -> None:
    verdict = check.judge(
        {"loaded": True, "gpu_offload": False, "system_info": "CPU : AVX2 = 1 |"}, gpu
    )
    assert verdict.ok is False and "has no CUDA" in verdict.message


def test_a_cuda_build_that_cannot_use_the_gpu_says_why(gpu: Hardware) -> None:
    out = "ggml_cuda_init: failed to initialize CUDA: CUDA driver version is insufficient\n"
    out += json.dumps(
        {"loaded": True, "gpu_offload": False, "devices": [], "system_info": "CUDA : ARCHS = 890 |"}
    )
    verdict = check.judge(check.parse(out), gpu)
    assert verdict == check.Outcome(
        False,
        "The build has CUDA, architectures 890 but sees no GPU: ggml_cuda_init: failed to "
        "initialize CUDA: CUDA driver version is insufficient",
    )


def test_fails_when_it_does_not_load(gpu: Hardware) -> None:
    verdict = check.judge({"loaded": False, "error": "OSError: libcublas.so.13: cannot open"}, gpu)
    assert verdict == check.Outcome(
        False, "The new build does not load: OSError: libcublas.so.13: cannot open"
    )


def test_without_a_gpu_it_could_not_check_rather_than_fail(no_gpu: Hardware) -> None:
    # A CUDA build without a GPU says gpu_offload false (seen on this CPU machine).
    loads = check.judge({"loaded": True, "gpu_offload": False, "system_info": INFO}, no_gpu)
    assert loads == check.Outcome(
        None,
        "Could not check GPU offload: no NVIDIA GPU here. The build loads and has CUDA, "
        "architectures 890 built in.",
    )
    no_driver = check.judge(
        {"loaded": False, "error": "OSError: libcuda.so.1: cannot open"}, no_gpu
    )
    assert no_driver.ok is None and "no NVIDIA driver" in no_driver.message


def test_parse_takes_the_last_json_line_among_native_logs() -> None:
    out = 'ggml_cuda_init: no CUDA devices\n{"loaded": true, "gpu_offload": true}\n'
    assert check.parse(out) == {
        "loaded": True,
        "gpu_offload": True,
        "cuda_init": ["ggml_cuda_init: no CUDA devices"],
    }
    assert check.parse("Segmentation fault\n")["loaded"] is False


def test_the_check_script_runs_in_a_real_interpreter_on_this_cpu_build() -> None:
    import subprocess
    import sys

    out = subprocess.run(check.argv(sys.executable), capture_output=True, text=True, timeout=120)
    result = check.parse(out.stdout)
    assert result["loaded"] is True and isinstance(result["gpu_offload"], bool)
    assert "CPU" in result["system_info"]
