"""`gptoss-local launch AGENT [AGENT ARGS...]`: a coding agent (Codex CLI, Claude Code,
opencode) on the local model, in one step; `gptoss-local codex` is `launch codex`.

It finds a `gptoss-local serve` already listening on this PC's --port and uses it; else it loads
the planned model itself (with the context the agent needs where memory allows) and serves it on
loopback for as long as the agent runs (`launch_serving`). It then writes what the agent needs
to talk to it (`agents/`), runs the agent with its arguments, and exits with its status. While
the agent runs the terminal is the agent's: the server logs to a file, and Ctrl-C goes to the
agent. `--config` only writes the agent's own configuration; `--restore` puts it back.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
from dataclasses import replace
from pathlib import Path

from gptoss_local.agents.agent import Agent, Served
from gptoss_local.agents.known import AGENTS
from gptoss_local.commands.launch_serving import find_server, model_check, planned, serving
from gptoss_local.commands.notes import note
from gptoss_local.errors import WishError
from gptoss_local.i18n import _


def run_launch(args: argparse.Namespace) -> int:
    """Run the agent named on the command line against a local server; its exit status."""
    agent = AGENTS[args.agent]
    if args.restore:
        print(agent.restore() or _("nothing to restore: gptoss-local has not changed {agent}'s "
                                   "configuration").format(agent=agent.title))  # fmt: skip
        return 0
    if args.config:
        return _configure(agent, args)
    program = agent_program(agent, args.agent_path)
    arguments = list(args.agent_args or ())
    running = None if args.new_server else find_server(args.port, model_check(args, agent))
    if running is not None:
        note(_("using the gptoss-local server at {url}").format(url=running.url))
        return run_agent(agent, program, replace(running, effort=args.effort or running.effort),
                         arguments)  # fmt: skip
    with serving(args, agent) as served:
        return run_agent(agent, program, served, arguments)


def run_codex(args: argparse.Namespace) -> int:
    """`gptoss-local codex`: `launch codex`, its words after `codex`'s own options."""
    return run_launch(argparse.Namespace(**vars(args), agent="codex", agent_args=args.codex_args))


def agent_program(agent: Agent, given: Path | None) -> str:
    """The agent's executable: the one given, else its name on the PATH."""
    found = str(given) if given else shutil.which(agent.name)
    if not found or not os.access(found, os.X_OK):
        raise WishError(
            _("{agent} is not installed (no `{program}` program found).").format(
                agent=agent.title, program=given or agent.name),
            _("Install it with `{command}` (it needs Node.js), or give its path with "
              "--{name}-path.").format(command=agent.install, name=agent.name),
        )  # fmt: skip
    return found


def run_agent(agent: Agent, program: str, served: Served, arguments: list[str]) -> int:
    """Write what the agent needs and run it in the foreground; its exit status."""
    start = agent.prepare(served)
    for line in start.notes:
        note(line)
    env = {k: v for k, v in os.environ.items() if k not in start.unset} | start.env
    env["PWD"] = _working_folder()  # opencode works in $PWD, not in the folder it runs in
    # Ctrl-C is the agent's (it stops the turn); this process waits, then stops the server.
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        return subprocess.call([program, *start.argv, *arguments], env=env)
    except OSError as exc:
        raise WishError(_("cannot start {agent} ({program}): {error}").format(
            agent=agent.title, program=program, error=exc.strerror or exc)) from None  # fmt: skip
    finally:
        signal.signal(signal.SIGINT, previous)


def _working_folder() -> str:
    """$PWD when it names this process's folder (a shell's own spelling, links kept), else the
    folder's real path."""
    here = os.getcwd()
    given = os.environ.get("PWD")
    try:
        return given if given and os.path.samefile(given, here) else here
    except OSError:  # $PWD names nothing that exists
        return here


def _configure(agent: Agent, args: argparse.Namespace) -> int:
    """`--config`: the agent's own configuration written for the server on --port."""
    served = find_server(args.port) or planned(args, agent)
    done = agent.configure(served)
    for line in done.notes:
        note(line)
    print(_("wrote {agent}'s configuration for {model} at {url} into {path}").format(
        agent=agent.title, model=served.model, url=served.url, path=done.path))  # fmt: skip
    print(_("Start the server with `gptoss-local serve --port {port}` (if it is not running), "
            "then `{command}`. `gptoss-local launch {name} --restore` undoes this.").format(
                port=args.port, command=agent.started_with, name=agent.name))  # fmt: skip
    return 0
