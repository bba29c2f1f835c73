"""`gptoss-local chat`: the chat TUI."""

from __future__ import annotations

import argparse

from gptoss_local.commands.arg_types import chat_id
from gptoss_local.commands.specs.command import Command
from gptoss_local.commands.specs.shared import (
    client_arguments,
    model_source_arguments,
    wish_arguments,
)
from gptoss_local.i18n import N_, _
from gptoss_local.kinds import BACKENDS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `chat`."""
    wish_arguments(parser, backend=False)
    parser.add_argument(
        "--chat", type=chat_id, metavar="ID", help=_("reopen a saved chat (see `chats`)")
    )
    model_source_arguments(parser, BACKENDS)
    client_arguments(parser)


COMMAND = Command(
    name="chat",
    help=N_("chat with a local gpt-oss model in the terminal (saved in the history)"),
    description=N_(
        "Open the chat TUI on the planned model (or --model-path): streamed replies with "
        "their reasoning, switchable effort, stop with Esc; chats are saved as they stream."
    ),
    add_arguments=add_arguments,
    handler="gptoss_local.commands.chat:run_chat",
)
