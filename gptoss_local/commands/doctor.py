"""`gptoss-local doctor`."""

from __future__ import annotations

import argparse
import json
import os
import sys

from gptoss_local import config
from gptoss_local.doctor import report as doctor
from gptoss_local.doctor import text as doctor_text
from gptoss_local.plan.wishes import wishes_from


def run_doctor(args: argparse.Namespace) -> int:
    """Probe, plan and print; always exit 0 when the report could be made."""

    wishes = wishes_from(args, config.load())
    hardware, engine, plan, warnings = doctor.gather(wishes)
    if args.json:
        json.dump(doctor.report(hardware, engine, plan, warnings), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        color = sys.stdout.isatty() and "NO_COLOR" not in os.environ
        sys.stdout.write(doctor_text.render(hardware, engine, plan, warnings, color))
    return 0
