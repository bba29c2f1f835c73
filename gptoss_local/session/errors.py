"""Errors of the chat history. Each message says what happened and what to do."""

from __future__ import annotations


class HistoryError(Exception):
    """The chat history cannot be opened or does not hold what was asked for."""


class UnknownChatError(HistoryError):
    """No chat has the id that was asked for."""

    def __init__(self, chat_id: int) -> None:
        super().__init__(f"no chat with id {chat_id}; `gptoss-local chats` lists the saved chats")
        self.chat_id = chat_id


class SchemaTooNewError(HistoryError):
    """The history file was written by a newer gptoss-local than this one."""
