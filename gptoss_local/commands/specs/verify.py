"""`gptoss-local verify`: downloaded models hashed and checked again."""

from __future__ import annotations

import argparse

from gptoss_local.commands.specs.command import Command
from gptoss_local.commands.specs.shared import quiet_argument
from gptoss_local.i18n import N_, _


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `verify`."""
    parser.add_argument(
        "model", nargs="?", help=_("20b, 120b or a full name (default: every model)")
    )
    quiet_argument(parser)


COMMAND = Command(
    name="verify",
    help=N_("hash downloaded models again and check them"),
    description=N_("Hash the model files again against the manifest and check the GGUF."),
    add_arguments=add_arguments,
    handler="gptoss_local.commands.verify:run_verify",
)
