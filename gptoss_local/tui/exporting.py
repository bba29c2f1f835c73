"""Exporting the open chat as Markdown from the chat (Ctrl+S), as `gptoss-local chats export`
does (`session.export`): to a file the user names, in the folder the app was started from
unless the path says otherwise.

The chat is read and rendered when the action runs, on the UI thread like every other read of
the history (a failure there is the action's, reported as one of the history); the file is
written on a thread worker (it is synced) and the user is told where it went, or why not.
"""

from __future__ import annotations

import re
from functools import partial
from pathlib import Path
from typing import Any

from textual.screen import Screen

from gptoss_local.i18n import _
from gptoss_local.session import export
from gptoss_local.session.history import History
from gptoss_local.session.records import Chat
from gptoss_local.tui.modals import ConfirmScreen, ExportScreen

_SLUG_CHARS = 40  # of the title, in the file name offered


def suggested_name(chat: Chat) -> str:
    """The file name offered for `chat`: "chat-12-squares-in-python.md" (its id and title)."""
    slug = re.sub(r"[\W_]+", "-", chat.title.lower()).strip("-")
    if len(slug) > _SLUG_CHARS:
        cut = slug[:_SLUG_CHARS]
        slug = cut.rsplit("-", 1)[0] if "-" in cut else cut  # at a word's end where there is one
    return f"chat-{chat.id}-{slug}.md" if slug else f"chat-{chat.id}.md"


def free_name(folder: Path, name: str) -> str:
    """`name`, or "name-2.md", "name-3.md", … : the first that is not in `folder` yet."""
    stem, suffix = Path(name).stem, Path(name).suffix
    candidate, number = name, 2
    while (folder / candidate).exists():
        candidate, number = f"{stem}-{number}{suffix}", number + 1
    return candidate


def export_chat(screen: Screen[Any], history: History, chat_id: int | None) -> None:
    """Ask where to export chat `chat_id` (a new chat, None, has nothing to export), then write
    it there. Raises HistoryError when the chat cannot be read."""
    if chat_id is None:
        screen.notify(_("Nothing to export yet: this chat has no messages."), timeout=4)
        return
    chat = history.get_chat(chat_id)
    text = export.to_markdown(chat, history.messages(chat_id), history.compactions(chat_id))
    folder = Path.cwd()
    name = free_name(folder, suggested_name(chat))
    screen.app.push_screen(ExportScreen(name, folder),
                           partial(_chosen, screen, text, folder, name))  # fmt: skip


def _chosen(screen: Screen[Any], text: str, folder: Path, name: str, answer: str | None) -> None:
    """Where the user said: a folder gets the name offered; a file there is replaced only
    after asking."""
    if not answer:
        return
    path = folder / Path(answer).expanduser()  # an absolute path stays as typed
    if path.is_dir():
        path = path / name
    if not path.is_file():
        _write(screen, text, path)
        return
    question = _("{path} exists. Replace it with this chat?").format(path=path)

    def replace(yes: bool | None) -> None:
        if yes:
            _write(screen, text, path)

    screen.app.push_screen(ConfirmScreen(question, yes=_("Replace")), replace)


def _write(screen: Screen[Any], text: str, path: Path) -> None:
    app = screen.app

    def write() -> None:  # on a thread: the file is synced before it is renamed into place
        try:
            export.write_private(path, text)
        except OSError as exc:
            error = _("Cannot write {path}: {error}").format(path=path, error=exc.strerror or exc)
            app.call_from_thread(screen.notify, error, title=_("Cannot export the chat"),
                                 severity="error", timeout=10, markup=False)  # fmt: skip
        else:
            app.call_from_thread(screen.notify, _("Chat exported to {path}").format(path=path),
                                 timeout=8, markup=False)  # fmt: skip

    screen.run_worker(write, thread=True, group="export", exit_on_error=False)
