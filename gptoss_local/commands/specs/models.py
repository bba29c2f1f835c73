"""`gptoss-local models` (or `list`): the models and their state."""

from __future__ import annotations

import argparse

from gptoss_local.commands.specs.command import Command
from gptoss_local.commands.specs.shared import json_argument
from gptoss_local.i18n import N_


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `models`."""
    json_argument(parser)


COMMAND = Command(
    name="models",
    aliases=("list",),
    help=N_("list the models with their state (absent, partial, present, verified, corrupt)"),
    description=N_("List each model of the manifest with its state, size and path."),
    add_arguments=add_arguments,
    handler="gptoss_local.commands.models:run_models",
)
