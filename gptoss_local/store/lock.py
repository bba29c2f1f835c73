"""A lock file per model file, so two pulls never write the same partial download.

The lock is a file created with O_EXCL that holds the owner's PID and process start time. It is
portable (no fcntl or msvcrt) and survives a crash as a stale file, which the next pull detects
(that PID is gone, or now belongs to another process) and takes over.
"""

from __future__ import annotations

import json
import os
import socket
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from gptoss_local.i18n import _
from gptoss_local.store.errors import LockedError

Waiting = Callable[[int], None]


def _start_time(pid: int) -> float | None:
    import psutil  # deferred: psutil costs a few ms to import

    try:
        return float(psutil.Process(pid).create_time())
    except (psutil.Error, OSError):
        return None


def _owner(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        # Being written this instant, or garbage: garbage older than a few seconds is stale.
        try:
            young = time.time() - path.stat().st_mtime < 5
        except FileNotFoundError:
            return None
        return {"pid": -1, "host": socket.gethostname(), "young": True} if young else {}
    return data if isinstance(data, dict) else {}


def foreign_host(owner: dict) -> str | None:
    """The other computer's name when the lock was made on one (a folder shared over a network)."""
    host = owner.get("host")
    return host if isinstance(host, str) and host != socket.gethostname() else None


def holder_text(pid: int) -> str:
    """Who holds a lock, for a message: "process 1234", or another gptoss-local process
    (`pid` below 1: on another machine, or not known)."""
    if pid > 0:
        return _("process {pid}").format(pid=pid)
    return _("another gptoss-local process")


def holder(path: Path) -> int | None:
    """The PID of the live process holding lock `path`, or None when it is free or stale."""
    owner = _owner(path)
    if not owner:
        return None
    if owner.get("young"):
        return -1
    pid = owner.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        return None
    if foreign_host(owner):
        return pid  # another machine sharing the folder: we cannot tell, so assume it is alive
    started = _start_time(pid)
    if started is None:
        return None
    recorded = owner.get("started")
    if isinstance(recorded, (int, float)) and abs(recorded - started) > 1.0:
        return None  # the PID was reused by an unrelated process
    return pid


class FileLock:
    """An O_EXCL lock file: `with FileLock(path).acquire(): ...` releases it on the way out."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._token = uuid.uuid4().hex
        self._held = False

    def acquire(
        self, timeout: float | None = None, poll: float = 0.5, waiting: Waiting | None = None
    ) -> FileLock:
        """Take the lock, waiting while a live process holds it.

        Args:
            timeout: Seconds to wait for another holder: None as long as it runs, 0 not at all.
            poll: Seconds between looks at the lock file.
            waiting: Called once with the holder's PID when the lock is busy.

        Raises:
            LockedError: still held by another live process after `timeout`.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        told = False
        while not self._try_create():
            pid = holder(self.path)
            if pid is None:
                self._break_stale()
                continue
            self._refuse_foreign(pid)
            if deadline is not None and time.monotonic() >= deadline:
                raise LockedError(
                    _(
                        "{name} is being written by {who} (lock file {path}). Wait for it to "
                        "finish, or stop it and run again."
                    ).format(
                        name=self.path.name[: -len(".lock")], who=holder_text(pid), path=self.path
                    )
                )
            if waiting and not told:
                waiting(pid)
                told = True
            time.sleep(poll)
        self._held = True
        return self

    def _refuse_foreign(self, pid: int) -> None:
        """A lock made on another computer: whether it is stale cannot be told from here, so
        waiting could last for ever. Say whose it is and how to clear it instead."""
        host = foreign_host(_owner(self.path) or {})
        if host:
            raise LockedError(
                _(
                    "{name} is locked by gptoss-local on another computer, {host!r} "
                    "(process {pid}); lock file {path}. If no pull is running on {host}, "
                    "delete the lock file and run again."
                ).format(name=self.path.name[: -len(".lock")], host=host, pid=pid, path=self.path)
            )

    def _try_create(self) -> bool:
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            return False
        me = {
            "pid": os.getpid(),
            "started": _start_time(os.getpid()),
            "host": socket.gethostname(),
            "token": self._token,
        }
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(me, f)
        return True

    def _break_stale(self) -> None:
        # A tiny race remains if two processes break the same stale lock at once; the sha256
        # check at the end still refuses any file they might spoil.
        self.path.unlink(missing_ok=True)

    def release(self) -> None:
        """Remove the lock file if it is still ours."""
        if not self._held:
            return
        self._held = False
        owner = _owner(self.path)
        if owner and owner.get("token") == self._token:
            self.path.unlink(missing_ok=True)

    def __enter__(self) -> FileLock:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()
