"""Errors of the chat history. Each message says what happened and what to do."""

from __future__ import annotations

import shlex
from pathlib import Path

from gptoss_local.errors import UserError
from gptoss_local.i18n import _


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
