"""The index of the folders the browser searches: SQLite FTS5 in the data folder, bm25-ranked.

`update` brings it in line with the folders incrementally: a file whose size and mtime are
unchanged is not read; one whose bytes hash as before only has its mtime noted; others are
read and their chunks replaced; files gone from the folders leave the index. Searching reads
the chunks; `open` and `find` read the file itself (`reading.read_document`), so a page shows
the file as it is now.

One `Library` holds one connection behind a lock, shared by the threads of a chat. The file
is private (0600 in a 0700 folder) like the chat history: it holds the files' text.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from gptoss_local import paths
from gptoss_local.library.chunks import chunk
from gptoss_local.library.confined import read_inside
from gptoss_local.library.failures import (
    IndexDamagedError,
    check,
    set_aside,
    sqlite_errors,
)
from gptoss_local.library.reading import Found, Skipped, read_document, too_large, walk
from gptoss_local.library.schema import CHUNK_BITS, LibraryError, check_fts5, migrate
from gptoss_local.session.storage import prepare_private_file

FILE_NAME = "library.sqlite3"
_COMMIT_EVERY = 256  # files per transaction while indexing
_BUSY_TIMEOUT_MS = 5000  # how long to wait for another process's write (a `docs reindex`)
_WORD = re.compile(r"\w+", re.UNICODE)


def default_path() -> Path:
    """Where the index lives: ``paths.data_dir() / "library.sqlite3"`` (nothing is created)."""
    return paths.data_dir() / FILE_NAME


@dataclass(frozen=True)
class Progress:
    """How far an update is: `done` of `total` files of `folder`; `path` the file now."""

    folder: str
    done: int
    total: int
    path: str


@dataclass
class UpdateReport:
    """What an update did: files added, changed, removed and unchanged, and those skipped,
    counted by reason (`reading.SKIP_REASONS`)."""

    added: int = 0
    changed: int = 0
    removed: int = 0
    unchanged: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0


@dataclass(frozen=True)
class FolderInfo:
    """A folder as `docs` lists it: its files in the index, what was skipped (by reason),
    and when it was last brought up to date (None: never)."""

    path: str
    files: int
    skipped: dict[str, int]
    indexed_at: str | None


@dataclass(frozen=True)
class Hit:
    """A search result: the file (path, name for people, title), where in its lines the
    best passage starts (from 0), that passage's snippet, and its bm25 score (lower is
    better)."""

    path: str
    name: str
    title: str
    line: int
    snippet: str
    score: float


class Library:
    """An open index. ``with Library.open() as library: ...``.

    Args:
        conn: A connection to a migrated index (see `open`).
    """

    def __init__(self, conn: sqlite3.Connection, path: Path | None = None) -> None:
        self._conn = conn
        self._lock = threading.RLock()
        self.path = path

    @classmethod
    def open(cls, path: Path | None = None) -> Library:
        """Open the index (created and migrated if needed).

        Raises:
            LibraryError: SQLite has no FTS5, or the file cannot be an index: damaged
                (`IndexDamagedError`), locked by another process (`IndexLockedError`), or
                written by a newer gptoss-local.
        """
        check_fts5()
        path = path or default_path()
        prepare_private_file(path)
        with sqlite_errors(path):
            conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        try:
            with sqlite_errors(path):
                conn.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
                check(conn, path)  # before any write: a damaged file is left as it is
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA foreign_keys = ON")
                migrate(conn)
        except BaseException:
            conn.close()
            raise
        return cls(conn, path)

    @classmethod
    def rebuilt(cls, path: Path | None = None) -> tuple[Library, Path | None]:
        """The index emptied, to be filled anew: a damaged one (checked through, its full-text
        index too) is set aside, a sound one emptied in place.

        Returns:
            The open, empty index, and where the damaged file was set aside (None: it was not).

        Raises:
            LibraryError: The index is locked, or cannot be used for another reason.
        """
        path = path or default_path()
        try:
            with cls.open(path) as old:
                old._empty()
        except IndexDamagedError:
            aside = set_aside(path)
            return cls.open(path), aside
        return cls.open(path), None

    def _empty(self) -> None:
        """Check the whole index, then drop its tables and make them anew."""
        with self._using() as conn:
            check(conn, self.path, thorough=True)
        with self._transaction() as conn:
            for table in ("chunks", "files", "folders"):
                conn.execute(f"DROP TABLE {table}")
            conn.execute("PRAGMA user_version = 0")
        with self._using() as conn:
            migrate(conn)

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._conn.close()

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def size_bytes(self) -> int:
        """The index's size on disk, its write-ahead log included."""
        if self.path is None:
            return 0
        files = [self.path, self.path.with_name(self.path.name + "-wal")]
        return sum(f.stat().st_size for f in files if f.exists())

    # --- folders ---------------------------------------------------------------------------

    def folders(self) -> list[FolderInfo]:
        """The folders in the index, by path."""
        with self._using() as conn:
            rows = conn.execute(
                "SELECT path, files, skipped, indexed_at FROM folders ORDER BY path"
            ).fetchall()
        return [FolderInfo(p, n, json.loads(s), at) for p, n, s, at in rows]

    def forget(self, folder: str) -> bool:
        """Take a folder and its files out of the index; whether it was there."""
        with self._transaction() as conn:
            row = conn.execute("SELECT id FROM folders WHERE path = ?", (folder,)).fetchone()
            if row is None:
                return False
            for (file_id,) in conn.execute("SELECT id FROM files WHERE folder_id = ?", row):
                _drop_chunks(conn, file_id)
            conn.execute("DELETE FROM folders WHERE id = ?", row)
        return True

    def update(
        self, folders: Iterable[str], progress: Callable[[Progress], object] | None = None
    ) -> UpdateReport:
        """Bring the index in line with `folders` (absolute paths): each is walked and its
        changed files re-read; folders in the index but not in `folders` are forgotten."""
        started = time.monotonic()
        wanted = list(dict.fromkeys(folders))
        report = UpdateReport()
        for known in self.folders():
            if known.path not in wanted:
                self.forget(known.path)
        for folder in wanted:
            self._update_folder(folder, report, progress)
        with self._using() as conn:  # fold the write-ahead log in: the file's size is the index's
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        report.seconds = time.monotonic() - started
        return report

    def _update_folder(
        self, folder: str, report: UpdateReport, progress: Callable[[Progress], object] | None
    ) -> None:
        found: list[Found] = []
        skipped: Counter[str] = Counter()
        if Path(folder).is_dir():
            for item in walk(Path(folder)):
                if isinstance(item, Skipped):
                    skipped[item.reason] += 1
                else:
                    found.append(item)
        with self._transaction() as conn:
            conn.execute("INSERT OR IGNORE INTO folders (path) VALUES (?)", (folder,))
            row = conn.execute("SELECT id FROM folders WHERE path = ?", (folder,)).fetchone()
            folder_id = int(row[0])
            known = {
                row[0]: row[1:]
                for row in conn.execute(
                    "SELECT path, id, size, mtime_ns, sha256 FROM files WHERE folder_id = ?",
                    (folder_id,),
                )
            }
        for batch in _batches(found, _COMMIT_EVERY):
            with self._transaction() as conn:
                for number, item in batch:
                    if progress is not None:
                        progress(Progress(folder, number, len(found), str(item.path)))
                    path = str(item.path)
                    reason = self._file(
                        conn, folder, folder_id, item, known.pop(path, None), report
                    )
                    if reason is not None:
                        skipped[reason] += 1
        with self._transaction() as conn:
            for file_id, *_rest in known.values():
                _drop_chunks(conn, file_id)
                conn.execute("DELETE FROM files WHERE id = ?", (file_id,))
            report.removed += len(known)
            count = conn.execute(
                "SELECT COUNT(*) FROM files WHERE folder_id = ?", (folder_id,)
            ).fetchone()[0]
            conn.execute(
                "UPDATE folders SET files = ?, skipped = ?, indexed_at = ? WHERE id = ?",
                (count, json.dumps(dict(sorted(skipped.items()))), _now(), folder_id),
            )
        report.skipped.update(skipped)
        if progress is not None:
            progress(Progress(folder, len(found), len(found), ""))

    def _file(
        self,
        conn: sqlite3.Connection,
        folder: str,
        folder_id: int,
        item: Found,
        known: tuple[int, int, int, str] | None,
        report: UpdateReport,
    ) -> str | None:
        """Index one file if it changed; returns the reason it was skipped, if it was."""
        if known is not None and known[1:3] == (item.size, item.mtime_ns):
            report.unchanged += 1
            return None
        if too_large(item.path, item.size):
            if known is not None:
                _delete_file(conn, known[0])
            return "too_large"
        try:  # never through a link swapped in since the walk (`confined`)
            data, _info = read_inside(folder, str(item.path))
        except (OSError, Skipped) as exc:
            if known is not None:
                _delete_file(conn, known[0])
            return exc.reason if isinstance(exc, Skipped) else "unreadable"
        digest = hashlib.sha256(data).hexdigest()
        if known is not None and known[3] == digest:
            conn.execute("UPDATE files SET size = ?, mtime_ns = ? WHERE id = ?",
                         (item.size, item.mtime_ns, known[0]))  # fmt: skip
            report.unchanged += 1
            return None
        try:
            document = read_document(item.path, data)
        except Skipped as skip:
            if known is not None:
                _delete_file(conn, known[0])
            return skip.reason
        name = display_name(folder, str(item.path))
        values = (folder_id, str(item.path), name, item.size, item.mtime_ns, digest,
                  document.kind, document.title, document.text.count("\n"))  # fmt: skip
        if known is None:
            cursor = conn.execute(
                "INSERT INTO files (folder_id, path, name, size, mtime_ns, sha256, kind, title, "
                "lines) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                values,
            )
            file_id = int(cursor.lastrowid or 0)
            report.added += 1
        else:
            file_id = known[0]
            conn.execute(
                "UPDATE files SET folder_id = ?, path = ?, name = ?, size = ?, mtime_ns = ?, "
                "sha256 = ?, kind = ?, title = ?, lines = ? WHERE id = ?",
                (*values, file_id),
            )
            _drop_chunks(conn, file_id)
            report.changed += 1
        words = " ".join(_WORD.findall(name))
        conn.executemany(
            "INSERT INTO chunks (rowid, title, name, body, first_line) VALUES (?, ?, ?, ?, ?)",
            rows_of(file_id, document.title, words, document.text),
        )
        return None

    # --- searching -------------------------------------------------------------------------

    def search(self, query: str, topn: int = 10) -> list[Hit]:
        """The files that best match `query` (its words, any of them; bm25, the title and
        the file's name weighing more than the text), best first, one hit per file."""
        words = _WORD.findall(query)
        if not words:
            return []
        match = " OR ".join('"' + w.replace('"', "") + '"' for w in dict.fromkeys(words))
        sql = (
            "SELECT c.rowid, c.first_line, snippet(chunks, 2, '', '', '…', 24), "
            "bm25(chunks, 4.0, 3.0, 1.0) AS score FROM chunks c WHERE chunks MATCH ? "
            "ORDER BY score LIMIT ?"
        )
        with self._using() as conn:
            rows = conn.execute(sql, (match, topn * 8)).fetchall()
            best: dict[int, tuple[int, str, float]] = {}
            for rowid, first, snippet, score in rows:
                best.setdefault(rowid >> CHUNK_BITS, (first, snippet, score))
                if len(best) == topn:
                    break
            hits = []
            for file_id, (first, snippet, score) in best.items():
                row = conn.execute(
                    "SELECT path, name, title FROM files WHERE id = ?", (file_id,)
                ).fetchone()
                if row is not None:
                    hits.append(Hit(row[0], row[1], row[2], first, snippet, score))
        return hits

    def file_name(self, path: str) -> str | None:
        """How an indexed file is named for people, or None when it is not in the index."""
        with self._using() as conn:
            row = conn.execute("SELECT name FROM files WHERE path = ?", (path,)).fetchone()
        return row[0] if row else None

    @contextmanager
    def _using(self) -> Iterator[sqlite3.Connection]:
        """The connection, for one thread at a time; SQLite's errors as `LibraryError`s."""
        with self._lock, sqlite_errors(self.path):
            yield self._conn

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._using() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                if conn.in_transaction:  # SQLite ends it itself on some errors (a damaged page)
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")


def rows_of(file_id: int, title: str, words: str, text: str) -> Iterator[tuple[object, ...]]:
    """The FTS rows of a file's text: one per chunk, its rowid in the file's range."""
    for number, (first, body) in enumerate(chunk(text)):
        yield ((file_id << CHUNK_BITS) + number, title, words, body, first)


def display_name(folder: str, path: str) -> str:
    """``notes/setup.md``: the folder's own name, then the path inside it."""
    inside = Path(path).relative_to(folder).as_posix()
    return f"{Path(folder).name or folder}/{inside}"


def _drop_chunks(conn: sqlite3.Connection, file_id: int) -> None:
    low = file_id << CHUNK_BITS
    conn.execute("DELETE FROM chunks WHERE rowid >= ? AND rowid < ?",
                 (low, low + (1 << CHUNK_BITS)))  # fmt: skip


def _delete_file(conn: sqlite3.Connection, file_id: int) -> None:
    _drop_chunks(conn, file_id)
    conn.execute("DELETE FROM files WHERE id = ?", (file_id,))


def _batches(items: list[Found], size: int) -> Iterator[list[tuple[int, Found]]]:
    numbered = list(enumerate(items, 1))
    for start in range(0, len(numbered), size):
        yield numbered[start : start + size]


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


__all__ = ["FolderInfo", "Hit", "Library", "LibraryError", "Progress", "UpdateReport"]
