"""The `gptoss-local` command line: choose the language, parse, call one command's handler,
turn its errors into messages.

Each command declares its words, options and handler in `commands/specs/` (light modules); this
front collects them and imports the handler of the command run only. Heavy modules (llama_cpp,
textual, pynvml, psutil) are imported inside the commands that need them, so `gptoss-local --help`
costs little more than starting Python.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from gptoss_local import __version__, config
from gptoss_local.commands.argparse_words import translate_argparse
from gptoss_local.commands.specs import (
    bench,
    chat,
    chats,
    codex,
    docs,
    doctor,
    engine,
    import_model,
    launch,
    models,
    pull,
    resident,
    rm,
    run,
    serve,
    tools,
    user_service,
    verify,
)
from gptoss_local.commands.specs.command import Command, split_passed_on
from gptoss_local.errors import UserError
from gptoss_local.i18n import _, set_language

# Every command, in the order --help lists them; each declares its own options and handler.
COMMANDS: tuple[Command, ...] = (
    *(spec.COMMAND
      for spec in (doctor, run, bench, chat, serve, launch, codex, pull, models, verify, rm,
                   import_model, chats, tools, docs, engine)),
    resident.PS, resident.STOP, user_service.COMMAND,
)  # fmt: skip
BY_NAME = {name: command for command in COMMANDS for name in (command.name, *command.aliases)}
# Each command's handler as "module:function", imported only when that command runs.
HANDLERS = {name: command.handler for name, command in BY_NAME.items()}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every working command."""
    parser = argparse.ArgumentParser(
        prog="gptoss-local",
        description=_("Run OpenAI's gpt-oss models privately and offline on your NVIDIA RTX PC."),
    )
    parser.add_argument(
        "--version", action="version", version=f"gptoss-local {__version__}",
        help=_("show program's version number and exit"),
    )  # fmt: skip
    parser.add_argument(
        "--lang", metavar="LANG",
        help=_("the language of what gptoss-local shows: en, zh_CN or pt_BR (default: the "
            "settings file's language, else your locale)"),
    )  # fmt: skip
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS:
        command.add_to(commands)
    return parser


def _parse(argv: list[str]) -> argparse.Namespace:
    """The command line; a command that passes words on (`codex`, `launch AGENT`) gets those
    after its own options as they are."""
    parser = build_parser()
    command = BY_NAME.get(argv[0]) if argv else None
    if command is None or command.passes_on is None:
        return parser.parse_args(argv)
    named: list[str] = []
    inner, rest = parser, argv
    while (below := _subcommands(inner)) is not None and rest and rest[0] in below.choices:
        named, inner, rest = [*named, rest[0]], below.choices[rest[0]], rest[1:]  # `launch codex`
    if below is not None:  # no agent named, or an unknown one: argparse says so
        return parser.parse_args(argv)
    ours, passed_on = split_passed_on(inner, rest)
    args = parser.parse_args([*named, *ours])
    setattr(args, command.passes_on, passed_on)
    return args


def _subcommands(parser: argparse.ArgumentParser) -> argparse._SubParsersAction | None:
    """The parser's subcommands, or None."""
    found = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return found[0] if found else None


def choose_language(argv: list[str]) -> list[str]:
    """Set the language of everything shown from `--lang LANG` (anywhere on the command line,
    taken out of it), else the settings file's `language`, else the environment's locale;
    returns the command line without `--lang`. Before the parser is built: its help is
    translated too."""
    rest, chosen, taken = [], None, iter(argv)
    for word in taken:
        if word == "--lang":
            chosen = next(taken, None)
        elif word.startswith("--lang="):
            chosen = word.partition("=")[2]
        else:
            rest.append(word)
    if chosen is None:
        try:
            chosen = config.load().language or None
        except UserError:  # the command reports a broken settings file itself
            chosen = None
    set_language(chosen)
    translate_argparse()
    return rest


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code."""
    words = choose_language(list(sys.argv[1:] if argv is None else argv))
    args = _parse(words)
    if args.command is None:
        build_parser().print_help()
        return 0
    from gptoss_local.paths import check_home

    module_name, _colon, function_name = HANDLERS[args.command].partition(":")
    handler = getattr(importlib.import_module(module_name), function_name)
    try:
        check_home()
        return int(handler(args))
    except UserError as exc:
        print(_("gptoss-local: error: {error}").format(error=exc), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(_("gptoss-local: interrupted"), file=sys.stderr)
        return 130
    except OSError as exc:  # a file or folder the commands did not expect to fail: no traceback
        where = f" ({exc.filename})" if exc.filename else ""
        error = f"{exc.strerror or exc}{where}"
        print(_("gptoss-local: error: {error}").format(error=error), file=sys.stderr)
        return 2
