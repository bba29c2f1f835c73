"""Errors of the chat history. Each message says what happened and what to do."""

from __future__ import annotations

import shlex
from pathlib import Path

from gptoss_local.errors import UserError
from gptoss_local.i18n import _
from gptoss_local.units import size_text


class HistoryError(UserError):
    """The chat history cannot be opened or does not hold what was asked for."""


class UnknownChatError(HistoryError):
    """No chat has the id that was asked for."""

    def __init__(self, chat_id: int) -> None:
        super().__init__(
            _("no chat with id {id}; `gptoss-local chats` lists the saved chats").format(id=chat_id)
        )
        self.chat_id = chat_id


class SchemaTooNewError(HistoryError):
    """The history file was written by a newer gptoss-local than this one."""


class HistoryDamagedError(HistoryError):
    """SQLite finds the history file damaged (malformed pages, or not a database at all)."""

    def __init__(self, path: Path, detail: str) -> None:
        quoted = shlex.quote(str(path))
        super().__init__(
            _(
                "the chat history {path} is damaged ({detail}): it is not a usable chat history. "
                "To go on, move it away — `mv {quoted} {quoted}.damaged` — and gptoss-local "
                "starts a new, empty one; the old file may be recoverable with sqlite3's "
                ".recover command."
            ).format(path=path, detail=detail, quoted=quoted)
        )
        self.path = path


class HistoryDiskFullError(HistoryError):
    """The disk holding the history filled up; SQLite rolled back, so nothing saved is lost."""

    def __init__(self, path: Path, free: int | None) -> None:
        left = _("unknown") if free is None else size_text(free)
        super().__init__(
            _(
                "the disk holding the chat history is full ({folder}: {free} free), so "
                "{path} cannot be written. Free some space on that disk and try again; the "
                "history keeps everything saved before."
            ).format(folder=path.parent, free=left, path=path)
        )
        self.path = path
