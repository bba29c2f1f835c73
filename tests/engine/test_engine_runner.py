"""Running an install plan: steps in order, Ninja progress, the log, a failing step, the check."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from cards import card
from fake_nvml import FakeNvml

from gptoss_local.engine_setup import check
from gptoss_local.engine_setup.runner import StepProgress, run_plan
from gptoss_local.engine_setup.spec import InstallPlan, Step, Target
from gptoss_local.hardware.machine import probe


class FakeProcess:
    def __init__(self, output: str, code: int) -> None:
        self.stdout = io.StringIO(output)
        self.code = code

    def wait(self) -> int:
        return self.code


class FakePopen:
    """Answers each command with scripted output and exit code; records what it ran."""

    def __init__(self, answers: dict[str, tuple[str, int]]) -> None:
        self.answers = answers
        self.calls: list[tuple[list[str], dict[str, str]]] = []

    def __call__(self, argv: list[str], env: dict[str, str], **_: Any) -> FakeProcess:
        self.calls.append((argv, env))
        key = "check" if "-c" in argv else argv[3]
        output, code = self.answers[key]
        return FakeProcess(output, code)


def plan() -> InstallPlan:
    target = Target("/venv/bin/python", "/venv", "/venv/site", "3.11", "0.3.36", True)
    py = target.python
    steps = [
        Step("toolkit", "Install toolkit", (py, "-m", "pip", "install", "nvidia-cuda-nvcc")),
        Step("build", "Build", (py, "-m", "pip", "--verbose", "install"), {"CMAKE_ARGS": "-DX"}),
        Step("check", "Check", (py,)),
    ]
    return InstallPlan(
        target,
        ("89",),
        "--arch",
        "pip",
        "pip CUDA 13.0",
        "13.0",
        "llama-cpp-python==0.3.36",
        ("-DX",),
        {"CMAKE_ARGS": "-DX"},
        steps,
        [],
        [],
    )


BUILD_OUTPUT = (
    "Building\n  [1/3] Building C object a.o\n  [2/3] Building CUDA object b.o\n[3/3] Linking\n"
)
GOOD = json.dumps(
    {
        "loaded": True,
        "gpu_offload": True,
        "devices": ["NVIDIA GeForce RTX 4090"],
        "system_info": "CUDA : ARCHS = 890 | USE_GRAPHS = 1 | CPU : AVX2 = 1 |",
    }
)


def test_steps_run_in_order_with_progress_and_a_log(tmp_path: Path) -> None:
    popen = FakePopen(
        {
            "install": ("ok\n", 0),
            "--verbose": (BUILD_OUTPUT, 0),
            "check": ("ggml_cuda_init: found 1 device\n" + GOOD + "\n", 0),
        }
    )
    seen: list[StepProgress] = []
    log = tmp_path / "logs/engine.log"
    hardware = probe(FakeNvml([card("4090")]), models_path=tmp_path)
    result = run_plan(plan(), hardware, log, seen.append, popen)
    assert result.failed_step is None and set(result.seconds) == {"toolkit", "build", "check"}
    assert result.outcome == check.Outcome(
        True, "GPU offload works (CUDA, architectures 890): NVIDIA GeForce RTX 4090."
    )
    build = [(p.done, p.total) for p in seen if p.index == 2 and p.total]
    assert build == [(1, 3), (2, 3), (3, 3)]
    assert [p.finished for p in seen if p.index == 1] == [False, True]
    assert popen.calls[1][1]["CMAKE_ARGS"] == "-DX"  # the step's env on top of ours
    assert "PATH" in popen.calls[1][1]
    check_argv = popen.calls[2][0]
    assert check_argv[:2] == ["/venv/bin/python", "-c"]
    assert Path(check_argv[3], "gptoss_local").is_dir()  # our package reaches the target's check
    text = log.read_text()
    assert "[2/3] Building CUDA object" in text and "CMAKE_ARGS=-DX" in text
    assert "== Build: exit 0" in text


def test_a_failing_step_stops_the_run_with_its_last_lines(tmp_path: Path) -> None:
    failing = "".join(f"line {n}\n" for n in range(40)) + "CMake Error: CUDA not found\n"
    popen = FakePopen({"install": ("ok\n", 0), "--verbose": (failing, 1)})
    result = run_plan(
        plan(), probe(FakeNvml([]), models_path=tmp_path), tmp_path / "x.log", lambda p: None, popen
    )
    assert result.failed_step == "Build" and result.outcome is None
    assert result.tail[-1] == "CMake Error: CUDA not found" and len(result.tail) == 25
    assert len(popen.calls) == 2  # the check never ran


def test_a_command_that_cannot_start_is_a_failure(tmp_path: Path) -> None:
    def popen(argv: list[str], **_: Any) -> FakeProcess:
        raise FileNotFoundError(2, "No such file", argv[0])

    result = run_plan(
        plan(), probe(FakeNvml([]), models_path=tmp_path), tmp_path / "x.log", lambda p: None, popen
    )
    assert result.failed_step == "Install toolkit" and "could not start" in result.tail[0]


def test_without_a_gpu_the_check_says_it_could_not_check(tmp_path: Path) -> None:
    popen = FakePopen({"install": ("", 0), "--verbose": ("", 0), "check": (GOOD, 0)})
    result = run_plan(
        plan(),
        probe(FakeNvml([], init_error=12), models_path=tmp_path),
        tmp_path / "x.log",
        lambda p: None,
        popen,
    )
    assert result.outcome is not None and result.outcome.ok is None
    assert result.outcome.message.startswith("Could not check GPU offload: no NVIDIA GPU here")
