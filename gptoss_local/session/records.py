"""What the history hands out: `Chat` and `StoredMessage`, and their conversion from table rows.

Times are timezone-aware UTC datetimes, stored as ISO 8601 text (sortable, readable in exports).
Stats are stored as the JSON of the `Stats` dataclass; keys a newer version added are ignored.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import sqlite3
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, cast

from gptoss_local.attachments.model import AttachedFile, Kind
from gptoss_local.backends.base import Stats
from gptoss_local.conversation import Citation
from gptoss_local.events import ToolCall
from gptoss_local.kinds import EFFORTS, Effort

Role = Literal["user", "assistant", "tool"]
Status = Literal["complete", "partial", "stopped", "failed"]
_Record = TypeVar("_Record", "Chat", "StoredMessage", "Compaction")
_STATS_FIELDS = frozenset(field.name for field in dataclasses.fields(Stats))


@dataclass(frozen=True)
class Chat:
    """One saved conversation and its settings; `message_count` counts its stored messages."""

    id: int
    title: str
    created_at: dt.datetime
    updated_at: dt.datetime
    effort: Effort
    instructions: str | None
    model: str | None
    backend: str | None
    message_count: int = 0


@dataclass(frozen=True)
class StoredMessage:
    """One stored message.

    For assistant replies `content` is the answer (or the preamble before tool calls), `reasoning`
    the chain of thought, and `status` says how the reply ended: "partial" while it streams (or
    after a crash), "stopped" by the user, "failed" with `error`, else "complete". `citations`:
    the files and lines its answer cites, as they were resolved when it was written.
    """

    id: int
    chat_id: int
    seq: int
    role: Role
    content: str
    reasoning: str
    tool_calls: tuple[ToolCall, ...]
    tool_name: str | None
    status: Status
    stats: Stats | None
    effort: str | None
    created_at: dt.datetime
    updated_at: dt.datetime
    error: str | None
    attachments: tuple[AttachedFile, ...] = ()
    citations: tuple[Citation, ...] = ()


@dataclass(frozen=True)
class Compaction:
    """Where a chat's prompts stop going back: the messages before `before_seq` are replaced
    by `summary` (or, when it is "", left out; the model wrote none, or the chat's policy is
    to drop them). They stay saved and shown. The figures are for the marker the chat shows:
    how many messages were left out, the prompt's tokens before, the summary's cost."""

    id: int
    chat_id: int
    before_seq: int
    summary: str
    messages_left_out: int
    prompt_tokens_before: int
    summary_tokens: int
    seconds: float
    created_at: dt.datetime


def compaction_from_row(row: sqlite3.Row) -> Compaction:
    """A `Compaction` from a row of ``compactions``."""
    return _from_row(Compaction, row)


def attached_from_row(row: sqlite3.Row) -> AttachedFile:
    """An `AttachedFile` from a row of ``attachments``."""
    kind = cast(Kind, row["kind"] if row["kind"] in ("text", "pdf", "folder") else "text")
    return AttachedFile(row["name"], row["path"], row["sha256"], kind, row["text"], row["tokens"])


def citation_from_row(row: sqlite3.Row) -> Citation:
    """A `Citation` from a row of ``citations``."""
    return Citation(row["marker"], row["path"], row["name"], row["first_line"], row["last_line"])


def utc_now() -> dt.datetime:
    """The current time in UTC (the default clock of the history)."""
    return dt.datetime.now(dt.timezone.utc)


def time_text(when: dt.datetime) -> str:
    """A datetime as stored: UTC, ISO 8601 with microseconds, so text order is time order."""
    return when.astimezone(dt.timezone.utc).isoformat(timespec="microseconds")


def chat_from_row(row: sqlite3.Row) -> Chat:
    """A `Chat` from a row of ``chats`` plus a ``message_count`` column."""
    return _from_row(Chat, row, effort=as_effort(row["effort"]))


def message_from_row(row: sqlite3.Row) -> StoredMessage:
    """A `StoredMessage` from a row of ``messages``."""
    return _from_row(
        StoredMessage,
        row,
        tool_calls=calls_from_json(row["tool_calls"]),
        stats=stats_from_json(row["stats"]),
    )


def _from_row(kind: type[_Record], row: sqlite3.Row, **converted: Any) -> _Record:
    """A `kind` whose fields are the row's columns of the same names (the times read back
    as datetimes), but for the values `converted` gives; a field with a default may have
    no column."""
    columns = set(row.keys())
    values = {f.name: row[f.name] for f in dataclasses.fields(kind) if f.name in columns}
    for name in ("created_at", "updated_at"):
        if name in values:
            values[name] = dt.datetime.fromisoformat(values[name])
    return kind(**(values | converted))


def stats_to_json(stats: Stats | None) -> str | None:
    """The JSON text stored for `stats` (None stays NULL)."""
    return None if stats is None else json.dumps(dataclasses.asdict(stats))


def stats_from_json(text: str | None) -> Stats | None:
    """`Stats` from stored JSON; unknown keys (from a newer version) are dropped."""
    if not text:
        return None
    data = json.loads(text)
    return Stats(**{key: value for key, value in data.items() if key in _STATS_FIELDS})


def call_to_dict(call: ToolCall) -> dict[str, Any]:
    """A tool call as a JSON object: name, arguments, raw text, the parse error if any, and the
    channel it was written on."""
    return {
        "name": call.name,
        "arguments": call.arguments,
        "raw": call.raw,
        "error": call.error,
        "channel": call.channel,
    }


def calls_from_json(text: str | None) -> tuple[ToolCall, ...]:
    """Tool calls from their stored JSON list (rows written before calls had a channel were
    function calls, on commentary)."""
    if not text:
        return ()
    return tuple(
        ToolCall(
            item["name"],
            item.get("arguments") or {},
            item.get("raw", ""),
            item.get("error"),
            item.get("channel") or "commentary",
        )
        for item in json.loads(text)
    )


def as_effort(value: object) -> Effort:
    """A stored effort; anything else (an older or hand-edited file) reads as the default."""
    return cast(Effort, value) if value in EFFORTS else "medium"
