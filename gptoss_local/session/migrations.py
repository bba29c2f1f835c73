"""The history schema as an ordered list of migrations, tracked with ``PRAGMA user_version``.

Migration N (counting from 1) takes a database from version N-1 to N. Each runs in its own
transaction together with the version bump, so a failure leaves the database at N-1, never half
migrated. Append new migrations at the end; never edit or reorder released ones.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from gptoss_local.i18n import _
from gptoss_local.session.errors import SchemaTooNewError

# An SQL script, or a function for changes SQL alone cannot express (e.g. rewriting JSON).
Migration = str | Callable[[sqlite3.Connection], None]

_V1 = """
CREATE TABLE chats (
    id INTEGER PRIMARY KEY,
    title TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    effort TEXT NOT NULL DEFAULT 'medium' CHECK (effort IN ('low', 'medium', 'high')),
    instructions TEXT,
    model TEXT,
    backend TEXT
);
CREATE INDEX chats_by_update ON chats (updated_at DESC, id DESC);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY,
    chat_id INTEGER NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool')),
    content TEXT NOT NULL DEFAULT '',
    reasoning TEXT NOT NULL DEFAULT '',
    tool_calls TEXT,
    tool_name TEXT,
    status TEXT NOT NULL DEFAULT 'complete'
        CHECK (status IN ('complete', 'partial', 'stopped', 'failed')),
    stats TEXT,
    effort TEXT CHECK (effort IS NULL OR effort IN ('low', 'medium', 'high')),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    error TEXT,
    UNIQUE (chat_id, seq)
);
-- Replies left 'partial' by a crash are looked up at every start; keep that lookup tiny.
CREATE INDEX messages_partial ON messages (status) WHERE status = 'partial';
"""

# Files attached to user messages (the text as sent, so a chat reads the same after the file
# changes), and compactions: where a chat's prompts stop going back, with the summary that
# stands for what came before.
_V2 = """
CREATE TABLE attachments (
    id INTEGER PRIMARY KEY,
    message_id INTEGER NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    name TEXT NOT NULL,
    path TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('text', 'pdf', 'folder')),
    text TEXT NOT NULL,
    tokens INTEGER NOT NULL,
    UNIQUE (message_id, position)
);
CREATE TABLE compactions (
    id INTEGER PRIMARY KEY,
    chat_id INTEGER NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    before_seq INTEGER NOT NULL,
    summary TEXT NOT NULL DEFAULT '',
    messages_left_out INTEGER NOT NULL DEFAULT 0,
    prompt_tokens_before INTEGER NOT NULL DEFAULT 0,
    summary_tokens INTEGER NOT NULL DEFAULT 0,
    seconds REAL NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL
);
CREATE INDEX compactions_by_chat ON compactions (chat_id, before_seq);
"""

# The files and lines an answer cites (the browser's 【3†L10-L15】), resolved when it was
# written: the pages they point at are gone once the reply is over.
_V3 = """
CREATE TABLE citations (
    id INTEGER PRIMARY KEY,
    message_id INTEGER NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    marker TEXT NOT NULL,
    path TEXT NOT NULL,
    name TEXT NOT NULL,
    first_line INTEGER NOT NULL,
    last_line INTEGER NOT NULL,
    UNIQUE (message_id, position)
);
"""

MIGRATIONS: tuple[Migration, ...] = (_V1, _V2, _V3)


def schema_version(conn: sqlite3.Connection) -> int:
    """The database's ``user_version``: 0 for a new file, N after migration N."""
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(
    conn: sqlite3.Connection,
    migrations: tuple[Migration, ...] = MIGRATIONS,
    path: Path | None = None,
) -> int:
    """Apply the migrations the database lacks, in order, one transaction each.

    Args:
        conn: A connection in autocommit mode (``isolation_level=None``).
        migrations: The full ordered list; index 0 is version 1.
        path: The file, for error messages.

    Returns:
        The version the database is at afterwards (``len(migrations)``).

    Raises:
        SchemaTooNewError: The database is at a version newer than the last migration known.
    """
    latest = len(migrations)
    found = schema_version(conn)
    if found > latest:
        raise SchemaTooNewError(
            _(
                "{path} was written by a newer gptoss-local (history schema version {found}; "
                "this one knows up to {latest}). Upgrade gptoss-local, or move the file away to "
                "start a new history."
            ).format(path=path or _("the chat history"), found=found, latest=latest)
        )
    for version in range(found + 1, latest + 1):
        _apply(conn, version, migrations[version - 1])
    return latest


def _apply(conn: sqlite3.Connection, version: int, migration: Migration) -> None:
    # BEGIN IMMEDIATE takes the write lock first, so two processes opening a new history at once
    # cannot both run the same migration: the second sees the new version and skips it.
    conn.execute("BEGIN IMMEDIATE")
    try:
        if schema_version(conn) >= version:
            conn.execute("ROLLBACK")
            return
        if isinstance(migration, str):
            for statement in _statements(migration):
                conn.execute(statement)
        else:
            migration(conn)
        conn.execute(f"PRAGMA user_version = {int(version)}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _statements(script: str) -> list[str]:
    # executescript() would COMMIT our transaction first, so the script is split here instead;
    # sqlite3.complete_statement keeps semicolons inside strings or triggers intact.
    out: list[str] = []
    current = ""
    for line in script.splitlines(keepends=True):
        current += line
        if sqlite3.complete_statement(current):
            out.append(current.strip())
            current = ""
    if current.strip() and not current.strip().startswith("--"):
        out.append(current.strip())
    return out
