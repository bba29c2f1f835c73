"""`gptoss-local bench`: prefill and decode speed of the planned model here."""

from __future__ import annotations

import argparse
from pathlib import Path

from gptoss_local.commands.specs.command import Command
from gptoss_local.commands.specs.shared import json_argument, switch_argument, wish_arguments
from gptoss_local.i18n import N_, _


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `bench`."""
    wish_arguments(parser, backend=False)
    parser.add_argument("--model-path", type=Path, metavar="FILE",
                        help=_("any gpt-oss GGUF file (default: the planned model)"))  # fmt: skip
    parser.add_argument(
        "--prompt-tokens", type=int, default=512, metavar="N", help=_("default 512")
    )
    parser.add_argument("--generate", type=int, default=128, metavar="N", help=_("default 128"))
    parser.add_argument("--repeats", type=int, default=3, metavar="N", help=_("default 3"))
    switch_argument(parser)
    json_argument(parser)


COMMAND = Command(
    name="bench",
    help=N_("measure prefill and decode speed of the planned model on this machine"),
    description=N_(
        "Load the planned model (or --model-path) and measure prompt evaluation and "
        "generation speed with gpt-oss's sampling settings and greedy decoding; compares the "
        "result with the known-good range for your GPU when there is one."
    ),
    add_arguments=add_arguments,
    handler="gptoss_local.commands.bench:run_bench",
)
