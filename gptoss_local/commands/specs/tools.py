"""`gptoss-local tools`: the tools the model can use listed, or one called."""

from __future__ import annotations

import argparse

from gptoss_local.commands.specs.command import Command
from gptoss_local.commands.specs.shared import json_argument, listing_subcommands
from gptoss_local.i18n import N_, _


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `tools` and its subcommands `list` (the default) and `call`."""
    actions = listing_subcommands(
        parser, "tools_command", "{list,call}", _("list every tool (the default)")
    )
    call = actions.add_parser(
        "call",
        help=_("call one tool directly, to check a set-up"),
        description=_(
            "Call a tool with JSON arguments and print its result, e.g. {example}."
        ).format(example="""`gptoss-local tools call python '{"code": "print(6*7)"}'`"""),
    )
    call.add_argument("name", help=_("the tool's name as `gptoss-local tools` lists it"))
    call.add_argument(
        "arguments", nargs="?", default="{}", metavar="JSON",
        help=_("the arguments as a JSON object (default: {empty})").format(empty="{}"),
    )  # fmt: skip
    json_argument(call, True, _("print the result as one JSON object"))


COMMAND = Command(
    name="tools",
    help=N_("list the tools the model can use (python, MCP servers), or call one"),
    description=N_(
        "List every tool the model can be offered: the built-in python tool "
        "(and what its sandbox enforces here) and the tools of the MCP servers in mcp.json "
        "in the config folder; or call one directly with `tools call NAME JSON`."
    ),
    add_arguments=add_arguments,
    handler="gptoss_local.commands.tools:run_tools",
)
