"""The library index's SQLite schema, its migrations, and the check that SQLite has FTS5.

Chunks of text live in an FTS5 table ranked with bm25, its words stemmed (Porter: "zebras"
finds "zebra"); a chunk's rowid is its file's id
shifted left by `CHUNK_BITS` plus its number, so a file's chunks are one rowid range: deleting
them is a range delete, not a scan of the whole table (FTS5 cannot index a column).
"""

from __future__ import annotations

import sqlite3

from gptoss_local.errors import UserError
from gptoss_local.i18n import _

CHUNK_BITS = 20  # a file may have up to a million chunks

_V1 = """
CREATE TABLE folders (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    indexed_at TEXT,
    files INTEGER NOT NULL DEFAULT 0,
    skipped TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE files (
    id INTEGER PRIMARY KEY,
    folder_id INTEGER NOT NULL REFERENCES folders (id) ON DELETE CASCADE,
    path TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    kind TEXT NOT NULL,
    title TEXT NOT NULL,
    lines INTEGER NOT NULL
);
CREATE INDEX files_by_folder ON files (folder_id);
CREATE VIRTUAL TABLE chunks USING fts5(
    title, name, body, first_line UNINDEXED, tokenize = 'porter unicode61 remove_diacritics 2'
);
"""
MIGRATIONS: tuple[str, ...] = (_V1,)


class LibraryError(UserError):
    """The index cannot be used; the message says why and what to do, `for_model` says it in
    English for the model (a browser call's error)."""

    def __init__(self, message: str, hint: str | None = None, for_model: str | None = None) -> None:
        super().__init__(message, hint)
        self.for_model = for_model or message


def check_fts5() -> None:
    """Refuse, with what to do, a Python whose SQLite was built without FTS5.

    Raises:
        LibraryError: FTS5 is missing.
    """
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE probe USING fts5(text)")
    except sqlite3.OperationalError as exc:
        raise LibraryError(
            _("this Python's SQLite {version} has no full-text search (FTS5): {error}").format(
                version=sqlite3.sqlite_version, error=exc
            ),
            _("Use a Python built with FTS5 (the python.org and most Linux builds have it)."),
        ) from None
    finally:
        conn.close()


def migrate(conn: sqlite3.Connection) -> None:
    """Bring the index to the newest schema, one migration per transaction.

    Raises:
        LibraryError: A newer gptoss-local wrote the file.
    """
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if version > len(MIGRATIONS):
        raise LibraryError(
            _("the docs index is from a newer gptoss-local (schema {version})").format(
                version=version
            ),
            _("Upgrade gptoss-local, or delete the index and run `gptoss-local docs reindex`."),
        )
    for number, script in enumerate(MIGRATIONS[version:], version + 1):
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in script.split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {number}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:  # SQLite ends it itself on some errors (a damaged page)
                conn.execute("ROLLBACK")
            raise
