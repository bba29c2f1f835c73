"""`gptoss-local run`: one prompt answered, scriptable."""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path

from gptoss_local.commands.arg_types import bounded_float, positive_int
from gptoss_local.commands.specs.command import Command
from gptoss_local.commands.specs.shared import (
    client_arguments,
    model_arguments,
    switch_argument,
)
from gptoss_local.i18n import N_, _
from gptoss_local.kinds import BACKENDS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `run`."""
    model_arguments(parser, BACKENDS)
    switch_argument(parser)
    parser.add_argument("prompt", nargs="?", help=_("the question (default: read from stdin)"))
    client_arguments(parser)
    parser.add_argument("--instructions", help=_("instructions for the model (a system prompt)"))
    parser.add_argument(
        "--max-tokens", type=positive_int, metavar="N", help=_("stop after N generated tokens")
    )
    parser.add_argument("--seed", type=int, help=_("sampling seed, for repeatable output"))
    parser.add_argument(
        "--temperature", type=bounded_float(0.0, 100.0), default=1.0,
        help=_("default 1.0; 0 = greedy"),
    )  # fmt: skip
    parser.add_argument(
        "--top-p", type=bounded_float(0.0, 1.0, low_open=True), default=1.0,
        help=_("default 1.0 (off)"),
    )  # fmt: skip
    _tool_arguments(parser)
    parser.add_argument(
        "--file", action="append", default=[], type=Path, metavar="PATH", dest="files",
        help=_("attach a text or code file, a PDF (as its text) or a folder (its listing and "
            "files) after the prompt (repeatable)"),
    )  # fmt: skip
    _output_arguments(parser)


def _tool_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--tools", type=Path, metavar="FILE",
        help=_("JSON list of function tools: offered; a call of one is printed and ends the run"),
    )  # fmt: skip
    parser.add_argument(
        "--allow-tool", action="append", default=[], metavar="NAME",
        help=_("offer this tool and run its calls without asking: python, an MCP tool as "
            "`gptoss-local tools` lists it, or a pattern such as 'git__*' (repeatable)"),
    )  # fmt: skip
    parser.add_argument(
        "--tool-choice", metavar="required|NAME",
        help=_("make the first reply call a tool: any offered one (required), or the one named "
            "(default: auto, the model decides)"),
    )  # fmt: skip


def _output_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--schema", metavar="FILE|JSON",
        help=_("answer with JSON that this JSON schema accepts (a file, or the schema itself); "
            "exit 1 when the answer does not match"),
    )  # fmt: skip
    parser.add_argument(
        "--show-reasoning", action="store_true", help=_("print the reasoning to stderr")
    )
    parser.add_argument("--json", action="store_true", help=_("one JSON object per line on stdout"))
    parser.add_argument(
        "--print-prompt", action="store_true", help=_("print the exact Harmony prompt and exit")
    )
    parser.add_argument(
        "--date", type=dt.date.fromisoformat, metavar="YYYY-MM-DD", help=_("current date")
    )


COMMAND = Command(
    name="run",
    help=N_("answer one prompt and exit (scriptable)"),
    description=N_(
        "Answer one prompt with a local gpt-oss model: the answer goes to stdout, "
        "reasoning to stderr with --show-reasoning, or everything as JSON lines with --json."
    ),
    add_arguments=add_arguments,
    handler="gptoss_local.commands.run:run_run",
)
