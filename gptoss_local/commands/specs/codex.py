"""`gptoss-local codex`: `launch codex` by its older name; the words after its options go to
Codex."""

from __future__ import annotations

import argparse

from gptoss_local.commands.specs.command import Command
from gptoss_local.commands.specs.launch import agent_arguments
from gptoss_local.i18n import N_


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `launch codex`; everything after them goes to Codex."""
    agent_arguments(parser, "codex", "Codex CLI", rest="codex_args")


COMMAND = Command(
    name="codex",
    help=N_("run OpenAI's Codex CLI on the local model"),
    description=N_(
        "Run Codex CLI (npm i -g @openai/codex) on the local model: uses the gptoss-local "
        "serve running on --port, or loads the planned model (with at least a 32k context "
        "where memory allows) and serves it while Codex runs; gives Codex a profile of its "
        "own ($CODEX_HOME/gptoss-local.config.toml). The same as `gptoss-local launch codex`. "
        'Arguments after the options go to Codex: gptoss-local codex exec "explain this '
        'repository"'
    ),
    add_arguments=add_arguments,
    handler="gptoss_local.commands.launch:run_codex",
    passes_on="codex_args",
)
