"""What goes wrong with the index file itself, said as what happened and what to do.

SQLite's errors become `LibraryError`s: the file locked by another process (named where Linux's
/proc/locks tells which holds it), damaged (malformed, or not a database: the index only holds
what was read from the folders, so `docs reindex --rebuild` sets the file aside and builds it
anew), or otherwise unusable (a full disk, a read-only folder). Each carries an English
`for_model` too: the model reads the browser's errors.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from gptoss_local.i18n import _
from gptoss_local.library.schema import LibraryError
from gptoss_local.session.storage import is_busy, is_damage, quick_check_problem

REBUILD = "gptoss-local docs reindex --rebuild"
_SIDE_FILES = ("-wal", "-shm", "-journal")


class IndexLockedError(LibraryError):
    """Another process holds the index (SQLite waited its busy timeout for it)."""

    def __init__(self, path: Path | None, holder: str | None) -> None:
        held = _(" ({holder})").format(holder=holder) if holder else ""
        super().__init__(
            _("the docs index {path} is locked: another process is writing it{holder}").format(
                path=path, holder=held
            ),
            _(
                "Wait until it has finished (a `docs reindex`, or a chat or `serve --browser` "
                "bringing the index up to date), or stop it, then try again."
            ),
            for_model="another process is updating the index. Try again in a moment.",
        )


class IndexDamagedError(LibraryError):
    """SQLite finds the index damaged: malformed pages, or not a database at all."""

    def __init__(self, path: Path | None, detail: str) -> None:
        super().__init__(
            _("the docs index {path} is damaged ({detail})").format(path=path, detail=detail),
            _(
                "Nothing of yours is lost: the index only holds what was read from your "
                "folders. Rebuild it with `{command}` (the damaged file is kept beside it, "
                "renamed)."
            ).format(command=REBUILD),
            for_model=f"the index of the user's folders is damaged ({detail}). The user can "
            f"rebuild it with `{REBUILD}`.",
        )


def index_error(exc: sqlite3.Error, path: Path | None) -> LibraryError:
    """The `LibraryError` to raise for SQLite's error `exc` on the index at `path`."""
    if is_damage(exc):
        return IndexDamagedError(path, str(exc))
    if is_busy(exc):
        return IndexLockedError(path, lock_holder(path) if path else None)
    return LibraryError(
        _("cannot use the docs index {path}: {error}").format(path=path, error=exc),
        _("Check that its folder is writable and the disk has room."),
        for_model=f"{exc}.",
    )


@contextmanager
def sqlite_errors(path: Path | None) -> Iterator[None]:
    """Turn an `sqlite3.Error` raised inside into `index_error(exc, path)`."""
    try:
        yield
    except sqlite3.Error as exc:
        raise index_error(exc, path) from None


def check(conn: sqlite3.Connection, path: Path | None, thorough: bool = False) -> None:
    """Refuse an index that SQLite finds damaged, before anything is written to it.

    quick_check reads every page once: 26-41 ms for an index of 10,000 files (13 MiB, Python
    3.11, SQLite 3.40, a 2-core VM, the file cached), worth it for a clear error at open
    instead of one in the middle of a search. `thorough` also has FTS5 check its index
    against the text, reading all of it (a rebuild's check: it reads all the files anyway).

    Raises:
        IndexDamagedError: It is damaged.
    """
    with sqlite_errors(path):
        problem = quick_check_problem(conn)
        if problem is not None:
            raise IndexDamagedError(path, problem)
        if thorough:
            conn.execute("INSERT INTO chunks (chunks) VALUES ('integrity-check')")


def lock_holder(path: Path) -> str | None:
    """``process 123 (gptoss-local docs reindex)``: the other process with a write lock on the
    index or its shared memory, where Linux's /proc/locks tells (reading it is cheap); None
    elsewhere, or when none is found."""
    files = set()
    for candidate in (path, _side(path, "-shm")):
        try:
            info = candidate.stat()
        except OSError:
            continue
        files.add(f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino}")
    try:
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        # "1: POSIX  ADVISORY  WRITE 9084 fe:00:2193707 120 120" (a waiter's has "->" after 1:)
        fields = line.split()
        if len(fields) < 6 or fields[3] != "WRITE" or fields[5] not in files:
            continue
        pid = int(fields[4]) if fields[4].isdigit() else 0
        if pid > 0 and pid != os.getpid():
            return _("process {pid} ({command})").format(pid=pid, command=_command(pid))
    return None


def _command(pid: int) -> str:
    """A process's command line, shortened: ``gptoss-local docs reindex``."""
    try:
        words = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return "?"
    words = [w for w in words if w]
    if len(words) > 1 and Path(words[0]).name.startswith("python") and "/" in words[1]:
        words = words[1:]  # the console script that the interpreter runs
    text = " ".join([Path(words[0]).name, *words[1:]]) if words else "?"
    return text if len(text) <= 60 else text[:59] + "…"


def set_aside(path: Path) -> Path:
    """Move a damaged index (with its -wal and -shm files: a stale log must not meet a new
    file) to ``library.sqlite3.damaged-<time>`` beside it, kept rather than deleted.

    Returns:
        Where the index is now.
    """
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target, number = path.with_name(f"{path.name}.damaged-{stamp}"), 1
    while any(_side(target, s).exists() for s in ("", *_SIDE_FILES)):
        number += 1
        target = path.with_name(f"{path.name}.damaged-{stamp}-{number}")
    for suffix in ("", *_SIDE_FILES):
        if _side(path, suffix).exists():
            os.replace(_side(path, suffix), _side(target, suffix))
    return target


def _side(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)
