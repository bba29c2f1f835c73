"""Carry out an `InstallPlan` step by step, with progress and a log file.

Each step's output goes to the log as it comes; the build's Ninja lines (`[123/456] ...`) give
its progress. A failing step stops the run and its last lines are handed back with the log's path.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from gptoss_local.engine_setup import check
from gptoss_local.engine_setup.spec import InstallPlan, Step
from gptoss_local.hardware.machine import Hardware
from gptoss_local.i18n import _

_NINJA = re.compile(r"^\s*\[(\d+)/(\d+)\]")


@dataclass(frozen=True)
class StepProgress:
    """Where the run is: step `index` of `count`, and within a build, `done` of `total` jobs."""

    index: int
    count: int
    title: str
    elapsed: float
    done: int | None = None
    total: int | None = None
    finished: bool = False


@dataclass
class RunResult:
    """How the run ended: `failed_step` is None when every step ran."""

    log: Path
    seconds: dict[str, float] = field(default_factory=dict)
    failed_step: str | None = None
    tail: list[str] = field(default_factory=list)
    outcome: check.Outcome | None = None


Popen = Callable[..., Any]


def run_plan(
    plan: InstallPlan,
    hardware: Hardware,
    log_path: Path,
    on_progress: Callable[[StepProgress], None],
    popen: Popen = subprocess.Popen,
) -> RunResult:
    """Run the plan's steps in order; stops at the first that fails.

    Args:
        plan: From `make_plan`, without problems.
        hardware: This PC (to judge the final check).
        log_path: The log file (appended to).
        on_progress: Called as steps start, advance and end.
        popen: `subprocess.Popen` or a stand-in.
    """
    result = RunResult(log_path)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("a", encoding="utf-8", errors="replace") as log:
        _write_header(log, plan)
        for index, step in enumerate(plan.steps, 1):
            started = time.monotonic()
            on_progress(StepProgress(index, len(plan.steps), step.title, 0.0))
            argv = check.argv(plan.target.python) if step.kind == "check" else list(step.argv)
            code, lines = _run_step(step, argv, log, popen, index, len(plan.steps), on_progress)
            elapsed = time.monotonic() - started
            result.seconds[step.kind] = round(elapsed, 1)
            log.write(f"== {step.title}: exit {code} after {elapsed:.1f} s\n")
            log.flush()
            on_progress(StepProgress(index, len(plan.steps), step.title, elapsed, finished=True))
            if step.kind == "check":
                result.outcome = check.judge(check.parse("\n".join(lines)), hardware)
                log.write(f"== check: {result.outcome}\n")
            elif code != 0:
                result.failed_step, result.tail = step.title, list(lines)[-25:]
                break
    return result


def _run_step(
    step: Step,
    argv: list[str],
    log: IO[str],
    popen: Popen,
    index: int,
    count: int,
    on_progress: Callable[[StepProgress], None],
) -> tuple[int, deque[str]]:
    log.write(f"\n== {step.title}\n$ {' '.join(argv)}\n")
    for name, value in step.env.items():
        log.write(f"  {name}={value}\n")
    log.flush()
    env = {**os.environ, **step.env}
    lines: deque[str] = deque(maxlen=200)
    started = time.monotonic()
    try:
        process = popen(
            argv,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            errors="replace",
            bufsize=1,
        )
    except OSError as exc:
        lines.append(_("could not start {program}: {error}").format(program=argv[0], error=exc))
        log.write(lines[-1] + "\n")
        return 127, lines
    for line in process.stdout:
        log.write(line)
        lines.append(line.rstrip("\n"))
        match = _NINJA.match(line)
        if match:
            done, total = int(match.group(1)), int(match.group(2))
            elapsed = time.monotonic() - started
            on_progress(StepProgress(index, count, step.title, elapsed, done, total))
    return process.wait(), lines


def _write_header(log: IO[str], plan: InstallPlan) -> None:
    log.write(f"# gptoss-local engine install --cuda, {time.strftime('%Y-%m-%d %H:%M:%S')}\n")
    log.write(f"# environment {plan.target.prefix} (Python {plan.target.python_version})\n")
    log.write(f"# toolkit {plan.toolkit_detail}; architectures {', '.join(plan.archs)}\n")
    log.flush()
