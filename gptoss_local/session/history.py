"""The chat history: chats and their messages in SQLite, saved as they happen.

A user message is committed before generation starts; a reply is a "partial" row from its first
token, filled in by buffered writes (`buffer.DeltaBuffer`) and given its final status, stats and
tool calls when it ends. A process that dies mid-reply leaves that row "partial" with the text
written so far; `recover_interrupted()` finds such rows at the next start.

Threads: one `History` holds one connection (``check_same_thread=False``) and an `RLock` taken by
every public method, so the TUI's streaming worker and its UI thread may share it. Errors: the
file is checked when opened; an sqlite3 error later (the file damaged underneath, a full disk)
leaves every public method as a `HistoryError` (`replies.ReplyWriter._locked`). Other
processes (e.g. `gptoss-local chats`) may open the file at the same time: WAL lets them read while
a reply is written, and writers wait up to 5 s for each other.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from types import TracebackType

from gptoss_local.attachments.model import AttachedFile
from gptoss_local.conversation import Citation, Conversation, Message, Tool
from gptoss_local.kinds import EFFORTS
from gptoss_local.session import storage
from gptoss_local.session.conversation import conversation_entries, conversation_from
from gptoss_local.session.errors import UnknownChatError
from gptoss_local.session.migrations import MIGRATIONS, Migration
from gptoss_local.session.records import (
    Chat,
    Compaction,
    StoredMessage,
    attached_from_row,
    chat_from_row,
    citation_from_row,
    compaction_from_row,
    message_from_row,
    time_text,
    utc_now,
)
from gptoss_local.session.replies import ReplyWriter

_TITLE_CHARS = 60
_CHAT_SELECT = (
    "SELECT c.*, (SELECT COUNT(*) FROM messages m WHERE m.chat_id = c.id) AS message_count "
    "FROM chats c"
)


class History(ReplyWriter):
    """An open chat history: ``with History() as history: ...``, or call `close()` yourself."""

    def __init__(
        self,
        path: Path | None = None,
        *,
        flush_interval: float = 0.1,
        flush_chars: int = 4096,
        clock: Callable[[], float] = time.monotonic,
        now: Callable[[], dt.datetime] = utc_now,
        migrations: tuple[Migration, ...] = MIGRATIONS,
    ) -> None:
        """Open (creating and migrating if needed) the history at `path`.

        Args:
            path: The SQLite file; default ``paths.data_dir() / "history.sqlite3"``.
            flush_interval: Longest time, in seconds, streamed text waits in memory.
            flush_chars: Write streamed text sooner when this many characters wait.
            clock: Monotonic clock of the write buffer (injectable for tests).
            now: Wall clock for the stored times (injectable for tests).
            migrations: The schema migrations (tests pass their own).

        Raises:
            HistoryDamagedError: The file is damaged (SQLite's quick_check fails).
            HistoryError: The file cannot be opened or is not a history.
            SchemaTooNewError: A newer gptoss-local wrote the file.
        """
        path = path or storage.default_path()
        conn = storage.connect(path, migrations)
        conn.row_factory = sqlite3.Row
        conn.create_function("gl_contains", 2, _contains, deterministic=True)
        super().__init__(path, conn, threading.RLock(), now, flush_interval, flush_chars, clock)

    def close(self) -> None:
        """Write any buffered text and close the file (replies in progress stay "partial").

        Raises:
            HistoryError: The buffered text could not be written; the file is closed anyway.
        """
        with self._locked() as conn:
            if self._closed:
                return
            try:
                self.flush()
            finally:
                self._closed = True
                conn.close()

    def __enter__(self) -> History:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # --- chats ---------------------------------------------------------------------------------

    def create_chat(
        self,
        title: str = "",
        *,
        effort: str = "medium",
        instructions: str | None = None,
        model: str | None = None,
        backend: str | None = None,
    ) -> Chat:
        """Start a new, empty chat. An empty title is set from the first user message.

        Raises:
            ValueError: `effort` is not low, medium or high.
        """
        _check_effort(effort)
        stamp = time_text(self._now())
        with self._write() as conn:
            cursor = conn.execute(
                "INSERT INTO chats (title, created_at, updated_at, effort, instructions, model, "
                "backend) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (title, stamp, stamp, effort, instructions, model, backend),
            )
        return self.get_chat(int(cursor.lastrowid or 0))

    def list_chats(self, search: str | None = None, *, limit: int | None = None) -> list[Chat]:
        """Chats, most recently updated first.

        Args:
            search: Keep only chats whose title or some message text contains this,
                ignoring case (Unicode-aware). Empty or None keeps all.
            limit: At most this many chats.
        """
        params: list[object] = []
        where = ""
        if search:
            where = (
                " WHERE gl_contains(c.title, ?1) OR EXISTS (SELECT 1 FROM messages m "
                "WHERE m.chat_id = c.id AND gl_contains(m.content, ?1))"
            )
            params.append(search.casefold())
        params.append(-1 if limit is None else limit)  # LIMIT -1 is no limit
        order = f" ORDER BY c.updated_at DESC, c.id DESC LIMIT ?{len(params)}"
        with self._locked():
            self.flush()  # so that a search finds text still streaming
            rows = self._conn.execute(_CHAT_SELECT + where + order, params).fetchall()
        return [chat_from_row(row) for row in rows]

    def get_chat(self, chat_id: int) -> Chat:
        """One chat. Raises `UnknownChatError` when there is none with that id."""
        with self._locked():
            row = self._conn.execute(f"{_CHAT_SELECT} WHERE c.id = ?", (chat_id,)).fetchone()
        if row is None:
            raise UnknownChatError(chat_id)
        return chat_from_row(row)

    def rename_chat(self, chat_id: int, title: str) -> None:
        """Give a chat a new title."""
        self._update_chat(chat_id, title=title)

    def set_effort(self, chat_id: int, effort: str) -> None:
        """Set the reasoning effort used for the chat's next replies ("low", "medium", "high")."""
        _check_effort(effort)
        self._update_chat(chat_id, effort=effort)

    def set_instructions(self, chat_id: int, instructions: str | None) -> None:
        """Set the chat's instructions (its system prompt); None or "" removes them."""
        self._update_chat(chat_id, instructions=instructions or None)

    def delete_chat(self, chat_id: int) -> None:
        """Delete a chat and all its messages.

        A reply still streaming into it is dropped: later appends to it raise `HistoryError`.
        """
        with self._write() as conn:
            if conn.execute("DELETE FROM chats WHERE id = ?", (chat_id,)).rowcount == 0:
                raise UnknownChatError(chat_id)
        self._forget_deleted()

    def _update_chat(self, chat_id: int, **values: str | None) -> None:
        # The keys are always the literal column names above, never user input.
        columns = "".join(f"{name} = ?, " for name in values)
        with self._write() as conn:
            cursor = conn.execute(
                f"UPDATE chats SET {columns}updated_at = ? WHERE id = ?",
                (*values.values(), time_text(self._now()), chat_id),
            )
            if cursor.rowcount == 0:
                raise UnknownChatError(chat_id)

    # --- messages ------------------------------------------------------------------------------

    def add_user_message(
        self, chat_id: int, content: str, attachments: Iterable[AttachedFile] = ()
    ) -> StoredMessage:
        """Store what the user sent, with the files attached to it (their text as sent),
        committed at once (before any reply is generated)."""
        with self._write() as conn:
            message_id = self._insert(conn, chat_id, "user", content=content)
            for position, a in enumerate(attachments):
                conn.execute(
                    "INSERT INTO attachments (message_id, position, name, path, sha256, kind, "
                    "text, tokens) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (message_id, position, a.name, a.path, a.sha256, a.kind, a.text, a.tokens),
                )
            title = content.strip().splitlines()[0] if content.strip() else ""
            if len(title) > _TITLE_CHARS:
                title = title[: _TITLE_CHARS - 1].rstrip() + "…"
            conn.execute("UPDATE chats SET title = ? WHERE id = ? AND title = ''", (title, chat_id))
        return self.get_message(message_id)

    def add_tool_message(self, chat_id: int, tool_name: str, content: str) -> StoredMessage:
        """Store the output of a tool the assistant called."""
        with self._write() as conn:
            message_id = self._insert(conn, chat_id, "tool", content=content, tool_name=tool_name)
        return self.get_message(message_id)

    def messages(self, chat_id: int) -> list[StoredMessage]:
        """A chat's messages in order, with any text still buffered."""
        self.get_chat(chat_id)
        with self._locked():
            self.flush()
            rows = self._conn.execute(
                "SELECT * FROM messages WHERE chat_id = ? ORDER BY seq", (chat_id,)
            ).fetchall()
            attached = self._conn.execute(
                "SELECT a.* FROM attachments a JOIN messages m ON m.id = a.message_id "
                "WHERE m.chat_id = ? ORDER BY a.message_id, a.position",
                (chat_id,),
            ).fetchall()
            cited = self._conn.execute(
                "SELECT c.* FROM citations c JOIN messages m ON m.id = c.message_id "
                "WHERE m.chat_id = ? ORDER BY c.message_id, c.position",
                (chat_id,),
            ).fetchall()
        files: dict[int, list[AttachedFile]] = {}
        for row in attached:
            files.setdefault(row["message_id"], []).append(attached_from_row(row))
        sources: dict[int, list[Citation]] = {}
        for row in cited:
            sources.setdefault(row["message_id"], []).append(citation_from_row(row))
        found = [message_from_row(row) for row in rows]
        return [
            replace(
                m, attachments=tuple(files.get(m.id, ())), citations=tuple(sources.get(m.id, ()))
            )
            for m in found
        ]

    def add_citations(self, message_id: int, citations: Iterable[Citation]) -> None:
        """Keep the files and lines a reply's answer cites (resolved while its pages exist)."""
        with self._write() as conn:
            conn.executemany(
                "INSERT INTO citations (message_id, position, marker, path, name, first_line, "
                "last_line) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(message_id, n, c.marker, c.path, c.name, c.first_line, c.last_line)
                 for n, c in enumerate(citations)],
            )  # fmt: skip

    def delete_from(self, message_id: int) -> int:
        """Delete a message and every later one of its chat (to regenerate or edit and resend).

        Returns:
            How many messages were deleted.
        """
        message = self.get_message(message_id)
        with self._write() as conn:
            cursor = conn.execute(
                "DELETE FROM messages WHERE chat_id = ? AND seq >= ?",
                (message.chat_id, message.seq),
            )
            # A compaction that left out some of the deleted messages no longer holds.
            conn.execute(
                "DELETE FROM compactions WHERE chat_id = ? AND before_seq > ?",
                (message.chat_id, message.seq),
            )
            self._touch(conn, message.chat_id)
        self._forget_deleted()
        return cursor.rowcount

    def to_conversation(
        self, chat_id: int, *, tools: Iterable[Tool] = (), current_date: dt.date | None = None
    ) -> Conversation:
        """The chat as the backend sees it: its instructions and its history as Harmony messages.

        Failed replies and empty partial ones are left out; stopped (and crash-interrupted)
        replies keep the text they have.
        """
        chat = self.get_chat(chat_id)
        messages, compaction = self.messages(chat_id), self.last_compaction(chat_id)
        return conversation_from(chat, messages, tuple(tools), current_date, compaction)

    def conversation_entries(self, chat_id: int) -> list[tuple[int | None, Message]]:
        """The messages of the chat's next prompt, each with its stored `seq` (None for the
        summary that stands for older ones): what `to_conversation` holds."""
        return conversation_entries(self.messages(chat_id), self.last_compaction(chat_id))

    # --- compactions ---------------------------------------------------------------------------

    def add_compaction(
        self,
        chat_id: int,
        before_seq: int,
        summary: str,
        *,
        messages_left_out: int = 0,
        prompt_tokens_before: int = 0,
        summary_tokens: int = 0,
        seconds: float = 0.0,
    ) -> Compaction:
        """Record that the chat's prompts start at message `before_seq` from now on, with
        `summary` standing for what came before ("" leaves it out)."""
        stamp = time_text(self._now())
        with self._write() as conn:
            cursor = conn.execute(
                "INSERT INTO compactions (chat_id, before_seq, summary, messages_left_out, "
                "prompt_tokens_before, summary_tokens, seconds, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    chat_id,
                    before_seq,
                    summary,
                    messages_left_out,
                    prompt_tokens_before,
                    summary_tokens,
                    seconds,
                    stamp,
                ),
            )
            self._touch(conn, chat_id)
            row = conn.execute(
                "SELECT * FROM compactions WHERE id = ?", (cursor.lastrowid,)
            ).fetchone()
        return compaction_from_row(row)

    def compactions(self, chat_id: int) -> list[Compaction]:
        """The chat's compactions, oldest first."""
        with self._locked():
            rows = self._conn.execute(
                "SELECT * FROM compactions WHERE chat_id = ? ORDER BY before_seq, id", (chat_id,)
            ).fetchall()
        return [compaction_from_row(row) for row in rows]

    def last_compaction(self, chat_id: int) -> Compaction | None:
        """The compaction the chat's prompts start from now (None: they start at the top)."""
        found = self.compactions(chat_id)
        return found[-1] if found else None


def _check_effort(effort: str) -> None:
    if effort not in EFFORTS:
        raise ValueError(f"effort must be one of {', '.join(EFFORTS)}, not {effort!r}")


def _contains(text: str | None, needle: str) -> bool:
    # SQLite's LIKE and lower() fold ASCII only; casefold() also matches "Straße" to "STRASSE".
    return text is not None and needle in text.casefold()
