"""`gptoss-local rm`: a model's files deleted."""

from __future__ import annotations

import argparse

from gptoss_local.commands.specs.command import Command
from gptoss_local.i18n import N_, _


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `rm`."""
    parser.add_argument("model", help=_("20b, 120b or a full model name"))
    parser.add_argument("--yes", "-y", action="store_true", help=_("delete without asking"))


COMMAND = Command(
    name="rm",
    help=N_("delete a model's files"),
    description=N_("Delete a model's files, after asking."),
    add_arguments=add_arguments,
    handler="gptoss_local.commands.rm:run_rm",
)
