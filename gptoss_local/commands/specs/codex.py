"""`gptoss-local codex`: Codex CLI on the local model; the words after its options go to
Codex."""

from __future__ import annotations

import argparse
from pathlib import Path

from gptoss_local.commands.arg_types import port_number
from gptoss_local.commands.specs.command import Command
from gptoss_local.commands.specs.shared import (
    LOCAL_BACKENDS,
    model_arguments,
)
from gptoss_local.i18n import N_, _


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `codex`; everything after them goes to Codex."""
    model_arguments(parser, LOCAL_BACKENDS)
    parser.add_argument(
        "--port", type=port_number, default=8080,
        help=_("use the gptoss-local serve on this port if one runs, else serve here while "
            "Codex runs (default 8080; another free port if it is taken)"),
    )  # fmt: skip
    parser.add_argument(
        "--new-server", action="store_true",
        help=_("load the model here even if a gptoss-local serve already runs"),
    )  # fmt: skip
    parser.add_argument(
        "--codex-path", type=Path, metavar="FILE",
        help=_("Codex CLI's program (default: `codex` on the PATH)"),
    )  # fmt: skip
    parser.add_argument(
        "codex_args", nargs="*", metavar="CODEX ARGS",
        help=_("everything after gptoss-local's own options goes to Codex as it is, e.g. "
            "--sandbox workspace-write or exec \"fix the failing test\""),
    )  # fmt: skip


COMMAND = Command(
    name="codex",
    help=N_("run OpenAI's Codex CLI on the local model"),
    description=N_(
        "Run Codex CLI (npm i -g @openai/codex) on the local model: uses the gptoss-local "
        "serve running on --port, or loads the planned model (with at least a 32k context "
        "where memory allows) and serves it while Codex runs; gives Codex a profile of its "
        "own ($CODEX_HOME/gptoss-local.config.toml). Arguments after the options go to Codex: "
        'gptoss-local codex exec "explain this repository"'
    ),
    add_arguments=add_arguments,
    handler="gptoss_local.commands.codex:run_codex",
    passes_on="codex_args",
)
