"""`gptoss-local launch AGENT`: a coding agent on the local model; the words after its options
go to the agent. `agent_arguments` are `codex`'s options too."""

from __future__ import annotations

import argparse
from pathlib import Path

from gptoss_local.agents.known import AGENTS
from gptoss_local.commands.arg_types import port_number
from gptoss_local.commands.specs.command import Command
from gptoss_local.commands.specs.shared import LOCAL_BACKENDS, model_arguments, switch_argument
from gptoss_local.i18n import N_, _


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """One subcommand per agent, each with `agent_arguments`."""
    agents = parser.add_subparsers(dest="agent", metavar="AGENT", required=True)
    for agent in AGENTS.values():
        one = agents.add_parser(
            agent.name,
            help=_("run {agent} on the local model").format(agent=agent.title),
            description=_("Run {agent} ({install}) on the local model. Arguments after the "
                "options go to {agent}.").format(agent=agent.title, install=agent.install),
        )  # fmt: skip
        agent_arguments(one, agent.name, agent.title)


def agent_arguments(
    parser: argparse.ArgumentParser, name: str, title: str, rest: str = "agent_args"
) -> None:
    """The options of `launch NAME` (and `codex`); the words after them go, into `rest`, to
    the agent."""
    model_arguments(parser, LOCAL_BACKENDS)
    switch_argument(parser)
    parser.add_argument(
        "--port", type=port_number, default=8080,
        help=_("use the gptoss-local serve on this port if one runs, else serve here while "
            "{agent} runs (default 8080; another free port if it is taken)").format(agent=title),
    )  # fmt: skip
    parser.add_argument(
        "--new-server", action="store_true",
        help=_("load the model here even if a gptoss-local serve already runs"),
    )  # fmt: skip
    parser.add_argument(
        f"--{name}-path", "--agent-path", type=Path, metavar="FILE", dest="agent_path",
        help=_("{agent}'s program (default: `{program}` on the PATH)").format(
            agent=title, program=name),
    )  # fmt: skip
    only = parser.add_mutually_exclusive_group()
    only.add_argument(
        "--config", action="store_true",
        help=_("only write {agent}'s configuration for the server on --port (your file is "
            "backed up first), and say how to start it").format(agent=title),
    )  # fmt: skip
    only.add_argument(
        "--restore", action="store_true",
        help=_("put back {agent}'s configuration as it was before gptoss-local changed it")
        .format(agent=title),
    )  # fmt: skip
    parser.add_argument(
        rest, nargs="*", metavar="ARGS",
        help=_("everything after gptoss-local's own options goes to {agent} as it is")
        .format(agent=title),
    )  # fmt: skip


COMMAND = Command(
    name="launch",
    help=N_("run a coding agent (codex, claude, opencode) on the local model"),
    description=N_(
        "Run a coding agent on the local model: Codex CLI (codex), Claude Code (claude) or "
        "opencode. It uses the gptoss-local serve running on --port, or loads the planned model "
        "(with the context the agent needs where memory allows) and serves it while the agent "
        "runs, and points the agent at it. Arguments after the options go to the agent: "
        'gptoss-local launch opencode run "explain this repository"'
    ),
    add_arguments=add_arguments,
    handler="gptoss_local.commands.launch:run_launch",
    passes_on="agent_args",
)
