"""`gptoss-local import`: a model file downloaded by hand, verified and adopted."""

from __future__ import annotations

import argparse
from pathlib import Path

from gptoss_local.commands.specs.command import Command
from gptoss_local.commands.specs.shared import quiet_argument
from gptoss_local.i18n import N_, _


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `import`."""
    parser.add_argument("path", type=Path, help=_("the downloaded .gguf file (or one shard)"))
    parser.add_argument(
        "--move", action="store_true", help=_("move the file instead of linking or copying it")
    )
    quiet_argument(parser)


COMMAND = Command(
    name="import",
    help=N_("adopt a model file downloaded by hand, after verifying it"),
    description=N_(
        "Verify a file you downloaded yourself against the manifest (size, "
        "sha256, GGUF structure) and hard-link, copy or move it into the models folder."
    ),
    add_arguments=add_arguments,
    handler="gptoss_local.commands.import_model:run_import",
)
