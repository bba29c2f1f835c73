"""`gptoss-local doctor`."""

from __future__ import annotations

import argparse
import json
import os
import sys

from gptoss_local import config
from gptoss_local.errors import WishError
from gptoss_local.planner import Wishes


def wishes_from(args: argparse.Namespace, settings: config.Settings) -> Wishes:
    """Command-line choices over the settings file's defaults."""
    model = args.model or settings.model
    context = args.context if args.context is not None else settings.context
    if context < 0:
        raise WishError(f"--context must be positive, not {context}")
    if args.cpu_moe is not None and args.cpu_moe < 0:
        raise WishError(f"--cpu-moe must be 0 or more, not {args.cpu_moe}")
    return Wishes(
        model=None if model == "auto" else model,
        context=context or None,
        effort=args.effort or settings.effort,
        backend=getattr(args, "backend", None) or settings.backend,
        cpu_moe_layers=args.cpu_moe,
    )


def run_doctor(args: argparse.Namespace) -> int:
    """Probe, plan and print; always exit 0 when the report could be made."""
    from gptoss_local import doctor, doctor_text

    wishes = wishes_from(args, config.load())
    try:
        hardware, engine, plan, warnings = doctor.gather(wishes)
    except KeyError as exc:
        raise WishError(exc.args[0]) from None
    if args.json:
        json.dump(doctor.report(hardware, engine, plan, warnings), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        color = sys.stdout.isatty() and "NO_COLOR" not in os.environ
        sys.stdout.write(doctor_text.render(hardware, engine, plan, warnings, color))
    return 0
