"""Writing a streamed reply: a "partial" row, buffered deltas, then its final status.

`ReplyWriter` is the base of `History`: the connection, its lock, write transactions and the
reply lifecycle (`begin_assistant_message` → `append_to_assistant`/`record` per delta →
`finish_assistant`, `mark_stopped` or `fail_assistant`). Deltas go to a `DeltaBuffer` and reach
SQLite at most every `flush_interval` seconds, so a per-token call costs microseconds.

Every use of the connection goes through `_locked()` (or `_write()`, which uses it): it takes the
lock and turns an `sqlite3.Error` into a `HistoryError`, a damaged file into a
`HistoryDamagedError` that says how to move it away. So no public method lets an sqlite3 error out.
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Literal

from gptoss_local.backends.base import Stats
from gptoss_local.events import AnswerDelta, Event, PreambleDelta, ReasoningDelta, ToolCall
from gptoss_local.i18n import _
from gptoss_local.session.buffer import DeltaBuffer
from gptoss_local.session.errors import HistoryError, UnknownChatError
from gptoss_local.session.records import (
    StoredMessage,
    call_to_dict,
    message_from_row,
    stats_to_json,
    time_text,
)
from gptoss_local.session.storage import sqlite_errors


class ReplyWriter:
    """The connection, its lock, and the streaming of assistant replies into rows."""

    def __init__(
        self,
        path: Path,
        conn: sqlite3.Connection,
        lock: threading.RLock,
        now: Callable[[], dt.datetime],
        flush_interval: float,
        flush_chars: int,
        clock: Callable[[], float],
    ) -> None:
        self.path = path
        self._conn, self._lock, self._now = conn, lock, now
        self._buffer = DeltaBuffer(flush_interval, flush_chars, clock)
        self._closed = False
        self.flush_count = 0  # writes of buffered text so far (for tests and benchmarks)

    def begin_assistant_message(self, chat_id: int, *, effort: str | None = None) -> StoredMessage:
        """Create the row of a reply about to stream, status "partial", committed at once.

        Args:
            chat_id: The chat replied to.
            effort: The reasoning effort used; default the chat's.
        """
        with self._write() as conn:
            if effort is None:
                row = conn.execute("SELECT effort FROM chats WHERE id = ?", (chat_id,)).fetchone()
                effort = row["effort"] if row else None
            message_id = self._insert(conn, chat_id, "assistant", status="partial", effort=effort)
            self._buffer.start(message_id)
        return self.get_message(message_id)

    def append_to_assistant(
        self, message_id: int, *, reasoning: str = "", answer: str = ""
    ) -> None:
        """Add streamed text to a reply in progress; cheap enough to call for every token.

        The text is kept in memory and written at most every `flush_interval` seconds (or
        sooner when `flush_chars` characters wait), and always when the reply ends.

        Raises:
            HistoryError: `message_id` is not a reply in progress.
        """
        with self._locked():
            if message_id not in self._buffer:
                self._check_partial(message_id)
                self._buffer.start(message_id)
            if self._buffer.add(message_id, reasoning, answer):
                self._flush_one(message_id)

    def record(self, message_id: int, event: Event) -> None:
        """Store one backend event of a reply: text deltas and tool calls; others are ignored.

        Reasoning goes to `reasoning`; answer and preamble text to `content`.
        """
        if isinstance(event, ReasoningDelta):
            self.append_to_assistant(message_id, reasoning=event.text)
        elif isinstance(event, AnswerDelta | PreambleDelta):
            self.append_to_assistant(message_id, answer=event.text)
        elif isinstance(event, ToolCall):
            with self._locked():
                self.append_to_assistant(message_id)
                self._buffer.add_call(message_id, event)
                self._flush_one(message_id)

    def flush(self) -> None:
        """Write all buffered text now (reads call this, so they always see every delta)."""
        with self._locked():
            for message_id in self._buffer.ids():
                self._flush_one(message_id)

    def finish_assistant(
        self,
        message_id: int,
        stats: Stats | None = None,
        tool_calls: Sequence[ToolCall] = (),
        *,
        status: Literal["complete", "stopped", "failed"] = "complete",
        error: str | None = None,
    ) -> StoredMessage:
        """End a reply: write the rest of its text, its status, stats and tool calls.

        Args:
            message_id: The reply in progress.
            stats: The stats the reply ended with (`Reply.stats`).
            tool_calls: Calls to add to those already given to `record`.
            status: How it ended.
            error: Why it failed (with status "failed").

        Raises:
            HistoryError: `message_id` is not a reply in progress.
        """
        with self._write() as conn:
            chat_id = self._check_partial(message_id)
            for call in tool_calls:
                self._buffer.start(message_id)
                self._buffer.add_call(message_id, call)
            self._flush_one(message_id)
            self._buffer.stop(message_id)
            conn.execute(
                "UPDATE messages SET status = ?, stats = ?, error = ?, updated_at = ? WHERE id = ?",
                (status, stats_to_json(stats), error, time_text(self._now()), message_id),
            )
            self._touch(conn, chat_id)
        return self.get_message(message_id)

    def mark_stopped(self, message_id: int, stats: Stats | None = None) -> StoredMessage:
        """End a reply the user stopped, keeping its text (also to keep an interrupted one)."""
        return self.finish_assistant(message_id, stats, status="stopped")

    def fail_assistant(
        self, message_id: int, error: str, stats: Stats | None = None
    ) -> StoredMessage:
        """End a reply that failed, keeping its text and the error message."""
        return self.finish_assistant(message_id, stats, status="failed", error=error)

    def recover_interrupted(self) -> list[StoredMessage]:
        """Replies left "partial" by a process that ended mid-reply, oldest first.

        They are kept as they are. The UI can offer to regenerate one (`delete_from`, then a new
        reply) or keep its text (`mark_stopped`). Replies this `History` is writing are not
        included.
        """
        with self._locked():
            self.flush()
            rows = self._conn.execute(
                "SELECT * FROM messages WHERE status = 'partial' ORDER BY created_at, id"
            ).fetchall()
            active = set(self._buffer.ids())
        return [message_from_row(row) for row in rows if row["id"] not in active]

    def get_message(self, message_id: int) -> StoredMessage:
        """One message, with any text still buffered."""
        with self._locked():
            self.flush()
            found = self._conn.execute("SELECT * FROM messages WHERE id = ?", (message_id,))
            row = found.fetchone()
        if row is None:
            raise HistoryError(_("no message with id {id}").format(id=message_id))
        return message_from_row(row)

    def _flush_one(self, message_id: int) -> None:
        reasoning, content, calls = self._buffer.take(message_id)
        if not (reasoning or content or calls):
            return
        params: list[object] = [reasoning, content, time_text(self._now())]
        sql = (
            "UPDATE messages SET reasoning = reasoning || ?, content = content || ?, updated_at = ?"
        )
        try:
            if calls:
                old = self._conn.execute("SELECT tool_calls FROM messages WHERE id = ?",
                                         (message_id,))  # fmt: skip
                stored = json.loads(old.fetchone()["tool_calls"] or "[]")
                sql += ", tool_calls = ?"
                params.append(json.dumps(stored + [call_to_dict(c) for c in calls],
                                         ensure_ascii=False))  # fmt: skip
            self._conn.execute(sql + " WHERE id = ?", [*params, message_id])
        except sqlite3.Error:  # kept for the next flush; `_locked` says what went wrong
            self._buffer.restore(message_id, reasoning, content, calls)
            raise
        self.flush_count += 1

    def _check_partial(self, message_id: int) -> int:
        row = self._conn.execute(
            "SELECT chat_id, role, status FROM messages WHERE id = ?", (message_id,)
        ).fetchone()
        if row is None or row["role"] != "assistant" or row["status"] != "partial":
            if row is None:
                state = _("no such message")
            else:
                state = _("a {status} {role} message").format(
                    status=row["status"], role=row["role"]
                )
            raise HistoryError(
                _("message {id} is not a reply in progress ({state})").format(
                    id=message_id, state=state
                )
            )
        return int(row["chat_id"])

    def _insert(
        self,
        conn: sqlite3.Connection,
        chat_id: int,
        role: str,
        *,
        content: str = "",
        status: str = "complete",
        effort: str | None = None,
        tool_name: str | None = None,
    ) -> int:
        if conn.execute("SELECT 1 FROM chats WHERE id = ?", (chat_id,)).fetchone() is None:
            raise UnknownChatError(chat_id)
        seq = conn.execute(
            "SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE chat_id = ?", (chat_id,)
        ).fetchone()[0]
        stamp = time_text(self._now())
        cursor = conn.execute(
            "INSERT INTO messages (chat_id, seq, role, content, tool_name, status, effort, "
            "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (chat_id, seq, role, content, tool_name, status, effort, stamp, stamp),
        )
        self._touch(conn, chat_id, stamp)
        return int(cursor.lastrowid or 0)

    def _touch(self, conn: sqlite3.Connection, chat_id: int, stamp: str | None = None) -> None:
        stamp = stamp or time_text(self._now())
        conn.execute("UPDATE chats SET updated_at = ? WHERE id = ?", (stamp, chat_id))

    def _forget_deleted(self) -> None:
        # Replies deleted while streaming (a chat deleted mid-reply) must not be written again.
        with self._locked():
            for message_id in self._buffer.ids():
                found = self._conn.execute("SELECT 1 FROM messages WHERE id = ?", (message_id,))
                if found.fetchone() is None:
                    self._buffer.stop(message_id)

    @contextmanager
    def _locked(self) -> Iterator[sqlite3.Connection]:
        # The connection under the lock; an sqlite3 error inside becomes a HistoryError.
        with self._lock, sqlite_errors(self.path):
            yield self._conn

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        # One short write transaction; IMMEDIATE takes the file's write lock up front, so a
        # second process waits (busy_timeout) instead of failing halfway.
        with self._locked() as conn:
            if self._closed:
                raise HistoryError(_("the chat history is closed"))
            conn.execute("BEGIN IMMEDIATE")  # may fail: locked by another process for 5 s
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:  # SQLite may have rolled back already (damage, I/O)
                    with suppress(sqlite3.Error):  # the first error is the one to report
                        conn.execute("ROLLBACK")
                raise
