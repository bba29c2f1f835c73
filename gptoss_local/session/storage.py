"""Open the history database privately: folder 0700, files 0600, WAL, foreign keys, migrations.

Chats are private text, so the file is created with mode 0600 before SQLite opens it (SQLite gives
its -wal and -shm files the mode of the database), and modes that are looser than that are
tightened on every open. On Windows the per-user AppData folder already keeps other users out and
POSIX modes mean little, so the mode checks are skipped there.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

from gptoss_local import paths
from gptoss_local.session.errors import HistoryError
from gptoss_local.session.migrations import MIGRATIONS, Migration, migrate

FILE_NAME = "history.sqlite3"
_SIDE_FILES = ("-wal", "-shm", "-journal")
_BUSY_TIMEOUT_MS = 5000  # the `chats` command may read while the TUI writes a reply


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
    """Open `path` (created privately if missing) and bring its schema up to date.

    Returns:
        A connection in autocommit mode (transactions are explicit ``BEGIN``/``COMMIT``) that
        any thread may use; callers serialise access with a lock.

    Raises:
        HistoryError: The file is not an SQLite database, or cannot be opened or written.
        SchemaTooNewError: The file was written by a newer gptoss-local.
    """
    try:
        prepare_private_file(path)
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    except (OSError, sqlite3.Error) as exc:
        raise HistoryError(f"cannot open the chat history {path}: {exc}") from exc
    try:
        conn.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
        migrate(conn, migrations, path)  # refuses a newer schema before anything is changed
        conn.execute("PRAGMA journal_mode = WAL")
        # NORMAL is safe in WAL mode against a killed process (only power loss can drop the
        # last commits) and avoids an fsync per flush of a streaming reply.
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise HistoryError(
            f"{path} is not a usable chat history ({exc}); move it away and gptoss-local will "
            "start a new one"
        ) from exc
    except BaseException:
        conn.close()
        raise
    return conn
