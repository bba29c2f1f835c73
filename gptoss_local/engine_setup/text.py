"""The words of `engine` and `engine install --cuda`: the report, the plan, the progress."""

from __future__ import annotations

import os
import shlex
from typing import Any

from gptoss_local.engine_setup.runner import StepProgress
from gptoss_local.engine_setup.spec import InstallPlan
from gptoss_local.units import duration


def report_lines(report: dict[str, Any]) -> list[str]:
    """The `engine` report as lines of text."""
    llama = report["llama_cpp_python"]
    if not llama["installed"] or llama["error"]:
        return [f"llama-cpp-python: {llama['error']}", f"Python     {report['python']}"]
    offload = report["gpu_offload"]
    cuda = report["cuda"]
    lines = [
        f"llama-cpp-python {llama['version']}  ({report['environment']})",
        f"GPU offload  {_offload(offload, cuda['built'])}",
        f"backends     {', '.join(report['backends']) or 'unknown'}",
    ]
    if cuda["built"]:
        archs = ", ".join(cuda["archs"]) or "not reported"
        lines.append(f"CUDA archs   {archs}")
        runtime = cuda["runtime"]
        if runtime:
            lines.append(f"CUDA runtime {runtime['version'] or '?'}  {runtime['path']}")
        else:
            lines.append("CUDA runtime not seen (only Linux shows which file was loaded)")
    if cuda["preloaded"]:
        lines.append("pip CUDA     " + "\n             ".join(cuda["preloaded"]))
    return lines


def _offload(offload: bool | None, cuda: bool) -> str:
    if offload:
        return "yes"
    return "no: CUDA is built in, but no usable GPU was found" if cuda else "no (CPU-only build)"


def plan_lines(plan: InstallPlan) -> list[str]:
    """The plan, as `--dry-run` prints it and as the install shows it before starting."""
    lines = [
        f"Environment   {plan.target.prefix}  (Python {plan.target.python_version})",
        f"Engine        {plan.requirement}  (installed: {plan.target.installed or 'none'})",
        f"Architecture  {', '.join(plan.archs) or '?'}  (from {plan.arch_source})",
        f"CUDA toolkit  {plan.toolkit_detail or plan.toolkit}",
    ]
    lines += ["", "Steps"]
    for number, step in enumerate(plan.steps, 1):
        lines.append(f"  {number}. {step.title}")
        if step.kind != "check":
            lines.append(f"     $ {shlex.join(step.argv)}")
    if plan.env:
        lines += ["", "Build environment"]
        for name, value in plan.env.items():
            if name == "PATH":  # only what the plan puts in front
                value = value.split(os.pathsep)[0] + os.pathsep + "…"
            lines.append(f"  {name}={value}")
    if plan.notes:
        lines += ["", "Notes", *[f"  - {note}" for note in plan.notes]]
    if plan.problems:
        lines += ["", "Cannot start", *[f"  ! {problem}" for problem in plan.problems]]
    return lines


def progress_line(progress: StepProgress) -> str:
    """'[2/3] Build llama-cpp-python (CUDA, compute 89): 123/456 · 4 min 12 s'."""
    line = f"[{progress.index}/{progress.count}] {progress.title}"
    if progress.total:
        line += f": {progress.done}/{progress.total}"
    if progress.elapsed >= 1:
        line += f" · {duration(progress.elapsed)}"
    if progress.finished:
        line += " · done"
    return line
