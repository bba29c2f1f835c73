"""Open the history database privately: folder 0700, files 0600, WAL, foreign keys, migrations.

Chats are private text, so the file is created with mode 0600 before SQLite opens it (SQLite gives
its -wal and -shm files the mode of the database), and modes that are looser than that are
tightened on every open. On Windows the per-user AppData folder already keeps other users out and
POSIX modes mean little, so the mode checks are skipped there.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from gptoss_local import paths
from gptoss_local.i18n import _
from gptoss_local.session.errors import HistoryDamagedError, HistoryDiskFullError, HistoryError
from gptoss_local.session.migrations import MIGRATIONS, Migration, migrate

FILE_NAME = "history.sqlite3"
_SIDE_FILES = ("-wal", "-shm", "-journal")
_BUSY_TIMEOUT_MS = 5000  # the `chats` command may read while the TUI writes a reply
_DAMAGE_CODES = (11, 26)  # SQLITE_CORRUPT, SQLITE_NOTADB (extended codes keep them in the low byte)
_BUSY_CODES = (5, 6)  # SQLITE_BUSY, SQLITE_LOCKED
_FULL, _IOERR = 13, 10  # SQLITE_FULL, SQLITE_IOERR
# SQLite reports a full disk as a plain I/O error where it cannot grow its -shm file
# (SQLITE_IOERR_SHMSIZE, met when a history is opened to be upgraded): with less free space than
# this left, an I/O error is taken for a full disk.
_NEARLY_FULL = 1 << 20


def default_path() -> Path:
    """Where the history lives: ``paths.data_dir() / "history.sqlite3"`` (nothing is created)."""
    return paths.data_dir() / FILE_NAME


def prepare_private_file(path: Path) -> None:
    """Create the folder (0700) and the empty file (0600) if missing; tighten looser modes.

    The folder is only tightened when it belongs to this user and is not a shared sticky folder
    such as /tmp, which must stay open to others.
    """
    folder = path.parent
    if not folder.exists():
        paths.ensure_dir(folder, mode=0o700)
    if os.name == "nt":
        path.touch(exist_ok=True)
        return
    info = folder.stat()
    if info.st_uid == os.getuid() and not info.st_mode & stat.S_ISVTX:
        _tighten(folder, 0o700)
    # O_EXCL-free create with mode 0600: an existing file is kept and tightened below.
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
    for candidate in [path, *(path.with_name(path.name + s) for s in _SIDE_FILES)]:
        if candidate.exists():
            _tighten(candidate, 0o600)


def _tighten(path: Path, mode: int) -> None:
    current = stat.S_IMODE(path.stat().st_mode)
    if current & 0o077:  # group or others may read: keep the owner's bits, drop the rest
        os.chmod(path, current & mode)


def connect(path: Path, migrations: tuple[Migration, ...] = MIGRATIONS) -> sqlite3.Connection:
    """Open `path` (created privately if missing), check it, and bring its schema up to date.

    Returns:
        A connection in autocommit mode (transactions are explicit ``BEGIN``/``COMMIT``) that
        any thread may use; callers serialise access with a lock.

    Raises:
        HistoryDamagedError: The file is damaged, or not an SQLite database (nothing is written).
        HistoryError: The file cannot be opened or written.
        SchemaTooNewError: The file was written by a newer gptoss-local.
    """
    try:
        prepare_private_file(path)
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    except (OSError, sqlite3.Error) as exc:
        raise HistoryError(
            _("cannot open the chat history {path}: {error}").format(path=path, error=exc)
        ) from exc
    try:
        with sqlite_errors(path):
            conn.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
            _check(conn, path)  # before any write: a damaged file is left as it is
            migrate(conn, migrations, path)  # refuses a newer schema before anything is changed
            conn.execute("PRAGMA journal_mode = WAL")
            # NORMAL is safe in WAL mode against a killed process (only power loss can drop the
            # last commits) and avoids an fsync per flush of a streaming reply.
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = ON")
    except BaseException:
        conn.close()
        raise
    return conn


def _check(conn: sqlite3.Connection, path: Path) -> None:
    # quick_check reads every page once (it skips integrity_check's index-to-table matching), so
    # its cost grows with the file. Measured with Python 3.11 and SQLite 3.40: a 49 MB history of
    # 300 chats and 6,000 messages takes 30-50 ms with the file in the OS cache, and 0.5-1 s
    # right after it was evicted from the cache (a virtual machine's disk); a history of a few MB
    # takes a few ms. That is worth paying at start: `chat` then loads a model of gigabytes, and
    # damage found here is a clear error instead of a failure in the middle of the TUI.
    problem = quick_check_problem(conn)
    if problem is not None:
        raise HistoryDamagedError(path, problem)


def quick_check_problem(conn: sqlite3.Connection) -> str | None:
    """What SQLite's quick_check finds wrong with the database of `conn` (None: nothing)."""
    found = conn.execute("PRAGMA quick_check").fetchone()
    if found is None or found[0] == "ok":
        return None
    last = str(found[0]).strip().splitlines()[-1]
    return f"SQLite's quick_check: {last[:120]}"


def is_damage(exc: sqlite3.Error) -> bool:
    """Whether SQLite's error says the file is damaged (malformed, or not a database)."""
    # Python 3.10 has no error code, but SQLite's damage codes are those that raise a plain
    # DatabaseError (locked, full, read-only and the like raise OperationalError).
    code = getattr(exc, "sqlite_errorcode", None)
    return type(exc) is sqlite3.DatabaseError if code is None else (code & 0xFF) in _DAMAGE_CODES


def is_busy(exc: sqlite3.Error) -> bool:
    """Whether SQLite's error says another connection holds the file (after its busy wait)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None:  # Python 3.10: the message says so
        return "locked" in str(exc) or "busy" in str(exc)
    return (code & 0xFF) in _BUSY_CODES


def history_error(exc: sqlite3.Error, path: Path) -> HistoryError:
    """The `HistoryError` to raise for an SQLite error on `path`: a damaged file (SQLite says
    it is malformed, or not a database) is a `HistoryDamagedError` saying how to move it away."""
    if is_damage(exc):
        return HistoryDamagedError(path, str(exc))
    if isinstance(exc, sqlite3.OperationalError):
        free = _free_bytes(path.parent)
        if _disk_full(getattr(exc, "sqlite_errorcode", None), str(exc), free):
            return HistoryDiskFullError(path, free)
    return HistoryError(
        _("cannot use the chat history {path}: {error}").format(path=path, error=exc)
    )


def _disk_full(code: int | None, text: str, free: int | None) -> bool:
    """Whether an OperationalError (its extended code, None before Python 3.11, and text) is
    the disk running out of space, given the space now `free` there."""
    if (code is not None and code & 0xFF == _FULL) or "disk is full" in text:
        return True
    io_error = code & 0xFF == _IOERR if code is not None else "disk I/O error" in text
    return io_error and free is not None and free < _NEARLY_FULL


def _free_bytes(folder: Path) -> int | None:
    try:
        return shutil.disk_usage(folder).free
    except OSError:
        return None


@contextmanager
def sqlite_errors(path: Path) -> Iterator[None]:
    """Turn an `sqlite3.Error` raised inside into `history_error(exc, path)`."""
    try:
        yield
    except sqlite3.Error as exc:
        raise history_error(exc, path) from exc
