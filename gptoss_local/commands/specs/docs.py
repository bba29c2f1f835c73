"""`gptoss-local docs`: the folders the browser tool searches."""

from __future__ import annotations

import argparse
from pathlib import Path

from gptoss_local.commands.specs.command import Command
from gptoss_local.commands.specs.shared import listing_subcommands
from gptoss_local.i18n import N_, _


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `docs` and its subcommands `list` (the default), `add`, `rm`, `reindex`."""
    actions = listing_subcommands(
        parser, "docs_command", "{list,add,rm,reindex}",
        _("list the folders, their files and the index"),
    )  # fmt: skip
    add = actions.add_parser(
        "add",
        help=_("let the browser search these folders (indexed now)"),
        description=_("Add folders to the browser's (settings' `docs`) and index their files."),
    )
    add.add_argument("paths", nargs="+", type=Path, metavar="PATH", help=_("a folder"))
    remove = actions.add_parser(
        "rm",
        help=_("stop searching a folder (its files leave the index)"),
        description=_("Remove a folder from the browser's, and its files from the index."),
    )
    remove.add_argument("path", type=Path, metavar="PATH", help=_("a folder the browser searches"))
    _reindex_arguments(actions)


def _reindex_arguments(actions: argparse._SubParsersAction) -> None:
    reindex = actions.add_parser(
        "reindex",
        help=_("bring the index up to date (only changed files are read again)"),
        description=_(
            "Walk the folders again: new and changed files are indexed, deleted ones leave "
            "the index; a file whose size and time are unchanged is not read."
        ),
    )
    reindex.add_argument(
        "--rebuild",
        action="store_true",
        help=_(
            "start the index anew and read every file again (a damaged index is kept beside "
            "it, renamed library.sqlite3.damaged-TIME)"
        ),
    )


COMMAND = Command(
    name="docs",
    help=N_("the folders the browser tool searches offline: list, add, rm, reindex"),
    description=N_(
        "The folders whose files the model's browser tool searches and opens, offline: "
        "text, Markdown, code, HTML and PDF, indexed in the data folder. `docs add PATH` "
        "adds and indexes, `docs rm PATH` removes, `docs reindex` reads what changed."
    ),
    add_arguments=add_arguments,
    handler="gptoss_local.commands.docs:run_docs",
)
