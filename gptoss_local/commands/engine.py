"""`gptoss-local engine` (what the engine is) and `engine install --cuda` (rebuild it)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

from gptoss_local import paths
from gptoss_local.engine_setup import plan as plan_mod
from gptoss_local.engine_setup import text
from gptoss_local.engine_setup.report import engine_report
from gptoss_local.engine_setup.runner import StepProgress, run_plan
from gptoss_local.engine_setup.spec import inspect_target
from gptoss_local.errors import UserError
from gptoss_local.hardware.machine import probe
from gptoss_local.i18n import _


class EngineSetupError(UserError):
    """The CUDA rebuild cannot start, or a step of it failed."""


def run_engine(args: argparse.Namespace) -> int:
    """`engine` prints the report; `engine install` rebuilds llama-cpp-python."""
    if args.engine_command == "install":
        return _install(args)
    report = engine_report()
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write("\n".join(text.report_lines(report)) + "\n")
    return 0


def _install(args: argparse.Namespace) -> int:
    if not args.cuda:
        raise EngineSetupError(
            _("Say which engine to build: `gptoss-local engine install --cuda`.")
        )
    python = args.python or sys.executable
    try:
        target = inspect_target(python)
    except (OSError, subprocess.SubprocessError, ValueError, KeyError) as exc:
        raise EngineSetupError(
            _("Could not ask {python} about its environment: {error}").format(
                python=python, error=exc
            )
        ) from exc
    hardware = probe()
    the_plan = plan_mod.make_plan(target, hardware, args.arch, args.toolkit)
    if args.json and args.dry_run:
        json.dump(the_plan.to_dict(), sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 2 if the_plan.problems else 0
    print("\n".join(text.plan_lines(the_plan)))
    if the_plan.problems:
        return 2
    if args.dry_run:
        print("\n" + _("(--dry-run: nothing was changed)"))
        return 0
    stamp = time.strftime("%Y%m%d-%H%M%S")
    log = paths.ensure_dir(paths.logs_dir()) / f"engine-install-{stamp}.log"
    print("\n" + _("Log: {path}").format(path=log))
    result = run_plan(the_plan, hardware, log, _Progress())
    for kind, seconds in result.seconds.items():
        print(f"  {kind}: {text.duration(seconds)}")
    if result.failed_step:
        tail = "\n".join(f"  | {line}" for line in result.tail[-15:])
        raise EngineSetupError(
            _("{step} failed:\n{tail}").format(step=result.failed_step, tail=tail),
            _("The whole log: {path}").format(path=log),
        )
    outcome = result.outcome
    print(outcome.message if outcome else _("No check ran."))
    return 1 if outcome is not None and outcome.ok is False else 0


class _Progress:
    """One line rewritten in place on a terminal; a line per step and every 10 % otherwise."""

    def __init__(self) -> None:
        self.tty = sys.stdout.isatty()
        self.last_tenth = -1

    def __call__(self, progress: StepProgress) -> None:
        line = text.progress_line(progress)
        if self.tty:
            end = "\n" if progress.finished else ""
            sys.stdout.write(f"\r\x1b[2K{line}{end}")
            sys.stdout.flush()
            return
        tenth = progress.done * 10 // progress.total if progress.total and progress.done else -1
        if progress.finished or progress.elapsed == 0.0 or tenth > self.last_tenth:
            self.last_tenth = -1 if progress.finished else max(tenth, self.last_tenth)
            print(line, flush=True)
