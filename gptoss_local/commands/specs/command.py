"""What a command declares: its name, its words for --help, its options, and its handler's
place, imported only when the command runs (`cli.py` does that)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

from gptoss_local.i18n import translate


@dataclass(frozen=True)
class Command:
    """One command of `gptoss-local`.

    Attributes:
        name: the word that runs it.
        help: its line in `gptoss-local --help`, marked with `N_()`.
        description: the paragraph at the top of its own --help, marked with `N_()`.
        add_arguments: declares its options (and subcommands) on its parser.
        handler: "module:function" taking the parsed arguments, returning the exit code.
        aliases: other words that run it.
        passes_on: the attribute that receives the words after its own options, which go to
            another program as they are (`codex`); None: argparse reads every word.
    """

    name: str
    help: str
    description: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    handler: str
    aliases: tuple[str, ...] = ()
    passes_on: str | None = None

    def add_to(self, commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
        """Add this command's parser, in the language chosen, to `commands`."""
        parser = commands.add_parser(
            self.name,
            aliases=list(self.aliases),
            help=translate(self.help),
            description=translate(self.description),
        )
        self.add_arguments(parser)
        return parser


def split_passed_on(
    parser: argparse.ArgumentParser, argv: list[str]
) -> tuple[list[str], list[str]]:
    """`argv` cut where `parser`'s own options end: the first word that is not one of them
    (or `--`) and everything after it belong to the program run (Codex's options and
    subcommands look like ours to argparse)."""
    takes_value = {
        flag: action.nargs != 0 for action in parser._actions for flag in action.option_strings
    }
    at = 0
    while at < len(argv):
        word = argv[at]
        flag = word.split("=", 1)[0]
        if word == "--" or flag not in takes_value:
            return argv[:at], argv[at + (word == "--") :]
        at += 1 + (takes_value[flag] and "=" not in word)
    return argv, []
