"""`gptoss-local ps` (what the engine holds, for whom) and `gptoss-local stop` (end it)."""

from __future__ import annotations

import argparse

from gptoss_local.commands.specs.command import Command
from gptoss_local.i18n import N_, _


def add_ps_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `ps`."""
    parser.add_argument("--json", action="store_true", help=_("print JSON (for scripts)"))


def add_stop_arguments(parser: argparse.ArgumentParser) -> None:
    """`stop` takes no options."""


PS = Command(
    name="ps",
    help=N_("show the engine that runs on this machine: its model, memory and users"),
    description=N_(
        "Show the engine other commands share (a `gptoss-local serve`): the model, whether it "
        "is loaded, the memory it takes, which programs use it or wait for it, and when it "
        "unloads."
    ),
    add_arguments=add_ps_arguments,
    handler="gptoss_local.commands.resident:run_ps",
)

STOP = Command(
    name="stop",
    help=N_("end the engine that runs on this machine"),
    description=N_(
        "End the engine other commands share (a `gptoss-local serve`), after checking that "
        "the runtime file names it: its replies are cancelled and the model is freed."
    ),
    add_arguments=add_stop_arguments,
    handler="gptoss_local.commands.resident:run_stop",
)
