"""The words of `engine` and `engine install --cuda`: the report, the plan, the progress."""

from __future__ import annotations

import os
import shlex
from typing import Any

from gptoss_local.engine_setup.runner import StepProgress
from gptoss_local.engine_setup.spec import InstallPlan
from gptoss_local.i18n import _
from gptoss_local.units import duration


def report_lines(report: dict[str, Any]) -> list[str]:
    """The `engine` report as lines of text."""
    llama = report["llama_cpp_python"]
    if not llama["installed"] or llama["error"]:
        return [f"llama-cpp-python: {llama['error']}", f"Python     {report['python']}"]
    offload = report["gpu_offload"]
    cuda = report["cuda"]
    backends = ", ".join(report["backends"]) or _("unknown")
    lines = [
        f"llama-cpp-python {llama['version']}  ({report['environment']})",
        _("GPU offload  {offload}").format(offload=_offload(offload, cuda["built"])),
        _("backends     {backends}").format(backends=backends),
    ]
    if cuda["built"]:
        archs = ", ".join(cuda["archs"]) or _("not reported")
        lines.append(_("CUDA archs   {archs}").format(archs=archs))
        runtime = cuda["runtime"]
        if runtime:
            lines.append(
                _("CUDA runtime {version}  {path}").format(
                    version=runtime["version"] or "?", path=runtime["path"]
                )
            )
        else:
            lines.append(_("CUDA runtime not seen (only Linux shows which file was loaded)"))
    if cuda["preloaded"]:
        preloaded = "\n             ".join(cuda["preloaded"])
        lines.append(_("pip CUDA     {libraries}").format(libraries=preloaded))
    return lines


def _offload(offload: bool | None, cuda: bool) -> str:
    if offload:
        return _("yes")
    if cuda:
        return _("no: CUDA is built in, but no usable GPU was found")
    return _("no (CPU-only build)")


def plan_lines(plan: InstallPlan) -> list[str]:
    """The plan, as `--dry-run` prints it and as the install shows it before starting."""
    target = plan.target
    lines = [
        _("Environment   {prefix}  (Python {version})").format(
            prefix=target.prefix, version=target.python_version
        ),
        _("Engine        {requirement}  (installed: {installed})").format(
            requirement=plan.requirement, installed=target.installed or _("none")
        ),
        _("Architecture  {archs}  (from {source})").format(
            archs=", ".join(plan.archs) or "?", source=plan.arch_source
        ),
        _("CUDA toolkit  {toolkit}").format(toolkit=plan.toolkit_detail or plan.toolkit),
    ]
    lines += ["", _("Steps")]
    for number, step in enumerate(plan.steps, 1):
        lines.append(f"  {number}. {step.title}")
        if step.kind != "check":
            lines.append(f"     $ {shlex.join(step.argv)}")
    if plan.env:
        lines += ["", _("Build environment")]
        for name, value in plan.env.items():
            if name == "PATH":  # only what the plan puts in front
                value = value.split(os.pathsep)[0] + os.pathsep + "…"
            lines.append(f"  {name}={value}")
    if plan.notes:
        lines += ["", _("Notes"), *[f"  - {note}" for note in plan.notes]]
    if plan.problems:
        lines += ["", _("Cannot start"), *[f"  ! {problem}" for problem in plan.problems]]
    return lines


def progress_line(progress: StepProgress) -> str:
    """'[2/3] Build llama-cpp-python (CUDA, compute 89): 123/456 · 4 min 12 s'."""
    line = f"[{progress.index}/{progress.count}] {progress.title}"
    if progress.total:
        line += f": {progress.done}/{progress.total}"
    if progress.elapsed >= 1:
        line += f" · {duration(progress.elapsed)}"
    if progress.finished:
        line += " · " + _("done")
    return line
