"""`gptoss-local chats`: the saved chats listed, or one exported."""

from __future__ import annotations

import argparse
from pathlib import Path

from gptoss_local.commands.arg_types import chat_id
from gptoss_local.commands.specs.command import Command
from gptoss_local.commands.specs.shared import listing_subcommands
from gptoss_local.i18n import N_, _


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `chats` and its subcommands `list` (the default) and `export`."""
    actions = listing_subcommands(
        parser, "chats_command", "{list,export}", _("list the saved chats (the default)")
    )
    parser.add_argument(
        "--search", metavar="TEXT", help=_("only chats whose title or text has TEXT")
    )
    # SUPPRESS: without it the subcommand's default would overwrite `chats --search`.
    actions.choices["list"].add_argument(
        "--search", metavar="TEXT", default=argparse.SUPPRESS, help=_("filter")
    )
    export = actions.add_parser(
        "export",
        help=_("write one chat as Markdown or JSON"),
        description=_("Write a chat with every message, its reasoning and its stats."),
    )
    export.add_argument("id", type=chat_id, help=_("the chat's id (see `gptoss-local chats`)"))
    export.add_argument("--format", choices=("md", "json"), default="md", help=_("default: md"))
    export.add_argument("--output", "-o", type=Path, metavar="FILE", help=_("default: stdout"))


COMMAND = Command(
    name="chats",
    help=N_("list the saved chats, or export one (chats export ID --format md|json)"),
    description=N_(
        "List the saved chats (id, title, last update, messages, model), or "
        "export one with its reasoning and per-message stats as Markdown or JSON."
    ),
    add_arguments=add_arguments,
    handler="gptoss_local.commands.chats:run_chats",
)
