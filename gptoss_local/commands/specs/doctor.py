"""`gptoss-local doctor`: what was found, and the plan."""

from __future__ import annotations

import argparse

from gptoss_local.commands.specs.command import Command
from gptoss_local.commands.specs.shared import json_argument, wish_arguments
from gptoss_local.i18n import N_, _


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `doctor`."""
    json_argument(parser, text=_("print one JSON document (see docs/doctor-json.md)"))
    wish_arguments(parser)


COMMAND = Command(
    name="doctor",
    help=N_("show the GPUs, memory and engine found, and which model would run and why"),
    description=N_(
        "Show the GPUs, memory, disk and engine found, and the plan: which model, "
        "where its parts go, how much memory it takes, and why."
    ),
    add_arguments=add_arguments,
    handler="gptoss_local.commands.doctor:run_doctor",
)
