"""A disk that fills up while the history is upgraded: a clear error that says the disk is full
and where, and the history file left exactly as it was, opening once space is freed.

The disk is real: a 2 MiB tmpfs (root only; skipped where mounting is not possible), filled by a
file before the history is opened.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from installed_cli import gptoss

from gptoss_local.session.errors import HistoryDiskFullError
from gptoss_local.session.history import History
from gptoss_local.session.migrations import MIGRATIONS, Migration


def _old_history(path: Path, migrations: tuple[Migration, ...] = MIGRATIONS[:-1]) -> str:
    """A history at `migrations`' version (one behind by default), with a chat in it; the
    file's digest."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with History(path, migrations=migrations) as history:
        chat = history.create_chat("kept through the full disk")
        for _ in range(20):
            history.add_user_message(chat.id, "hello " * 100)
    return _digest(path)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _fill(fs: Path, leave: int = 0) -> Path:
    """Fill `fs` up to `leave` bytes (in 4 KiB steps); the filler file, to free the space."""
    filler = fs / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while os.statvfs(fs).f_bavail * os.statvfs(fs).f_frsize > leave:
            os.write(fd, b"x" * 4096)
    except OSError:  # ENOSPC: full
        pass
    finally:
        os.close(fd)
    return filler


def _version(path: Path) -> int:
    """The schema version in the file's header (`PRAGMA user_version`, read without SQLite, which
    would need room for its side files)."""
    with path.open("rb") as f:
        f.seek(60)
        return int.from_bytes(f.read(4), "big")


def test_an_upgrade_on_a_full_disk_says_so_and_keeps_the_history(tiny_fs: Path) -> None:
    """What a user meets: SQLite cannot even make its -shm file, and says "disk I/O error"."""
    path = tiny_fs / "data" / "history.sqlite3"
    before = _old_history(path)
    filler = _fill(tiny_fs)
    done = gptoss("chats", env={"GPTOSS_LOCAL_HOME": str(tiny_fs)})
    assert "Traceback" not in done.stderr and done.returncode != 0, done.stderr
    assert "the disk holding the chat history is full" in done.stderr, done.stderr
    assert f"({path.parent}: " in done.stderr and "free some space" in done.stderr.lower()
    assert _digest(path) == before and _version(path) == len(MIGRATIONS) - 1

    filler.unlink()
    done = gptoss("chats", env={"GPTOSS_LOCAL_HOME": str(tiny_fs)})
    assert done.returncode == 0 and "kept through the full disk" in done.stdout, done.stderr
    assert _version(path) == len(MIGRATIONS)


def test_a_migration_that_runs_out_of_room_is_rolled_back(tiny_fs: Path) -> None:
    """Room for SQLite's side files, not for what the migration writes: "database or disk is
    full" half way through, and the transaction leaves the file as it was."""
    path = tiny_fs / "history.sqlite3"
    before = _old_history(path, MIGRATIONS)
    big = "CREATE TABLE big (b BLOB);\n" + "INSERT INTO big VALUES (zeroblob(300000));\n" * 2
    migrations = (*MIGRATIONS, big)
    filler = _fill(tiny_fs, leave=400_000)
    with pytest.raises(HistoryDiskFullError, match=rf"full \({tiny_fs}: .* free\)") as raised:
        History(path, migrations=migrations)
    assert raised.value.path == path
    assert _digest(path) == before and _version(path) == len(MIGRATIONS)

    filler.unlink()
    with History(path, migrations=migrations) as history:
        assert [c.title for c in history.list_chats()] == ["kept through the full disk"]
    assert _version(path) == len(MIGRATIONS) + 1
