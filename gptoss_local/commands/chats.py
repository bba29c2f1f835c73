"""`gptoss-local chats`: list the saved chats, or export one as Markdown or JSON."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from gptoss_local.commands.table import cut, table_lines
from gptoss_local.i18n import _, ngettext
from gptoss_local.session import export, storage
from gptoss_local.session.errors import HistoryError, UnknownChatError
from gptoss_local.session.history import History

if TYPE_CHECKING:
    from gptoss_local.session.history import History
    from gptoss_local.session.records import Chat

_TITLE_WIDTH = 48


def run_chats(args: argparse.Namespace) -> int:
    """List the chats or export one; exit 0, or 2 (via UnknownChatError) for an unknown id."""

    path = storage.default_path()
    if getattr(args, "chats_command", None) == "export":
        return _export(path, args.id, args.format, args.output)
    # Listing never creates the history: a new install has no chats and no file.
    chats = _chats(path, args.search) if path.exists() else []
    if args.json:
        doc = {"history": str(path), "chats": [_chat_json(chat) for chat in chats]}
        json.dump(doc, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
    elif chats:
        _print_table(chats)
    elif args.search:
        print(_("No chat matches {search}.").format(search=repr(args.search)))
    else:
        print(_("No saved chats yet. Chats you have with `gptoss-local chat` are listed here."))
    return 0


def _open(path: Path) -> History:

    return History(path)


def _chats(path: Path, search: str | None) -> list[Chat]:
    with _open(path) as history:
        return history.list_chats(search)


def _chat_json(chat: Chat) -> dict[str, object]:
    return {
        "id": chat.id,
        "title": chat.title,
        "created_at": chat.created_at.isoformat(),
        "updated_at": chat.updated_at.isoformat(),
        "messages": chat.message_count,
        "model": chat.model,
        "backend": chat.backend,
        "effort": chat.effort,
    }


def _print_table(chats: list[Chat]) -> None:
    rows = [(_("ID"), _("TITLE"), _("UPDATED"), _("MESSAGES"), _("MODEL"))]
    for chat in chats:
        title = cut(" ".join(chat.title.split()) or _("(untitled)"), _TITLE_WIDTH)
        updated = chat.updated_at.astimezone().strftime("%Y-%m-%d %H:%M")
        rows.append((str(chat.id), title, updated, str(chat.message_count), chat.model or "-"))
    print("\n".join(table_lines(rows)))


def _export(path: Path, chat_id: int, fmt: str, output: Path | None) -> int:

    if not path.exists():
        raise UnknownChatError(chat_id)
    with _open(path) as history:
        chat, messages = history.get_chat(chat_id), history.messages(chat_id)
        compactions = history.compactions(chat_id)
    text = (export.to_json if fmt == "json" else export.to_markdown)(chat, messages, compactions)
    if output is None:
        sys.stdout.write(text)
        return 0
    _write_private(output, text)
    wrote = ngettext(
        "wrote chat {id} ({n} messages) to {output}",
        "wrote chat {id} ({n} messages) to {output}",
        len(messages),
    )
    print(wrote.format(id=chat_id, n=len(messages), output=output), file=sys.stderr)
    return 0


def _write_private(output: Path, text: str) -> None:
    try:
        export.write_private(output, text)
    except OSError as exc:
        raise HistoryError(_cannot_write(output, exc)) from exc


def _cannot_write(output: Path, exc: OSError) -> str:
    return _("cannot write {where}: {error}").format(where=output, error=exc.strerror or exc)
