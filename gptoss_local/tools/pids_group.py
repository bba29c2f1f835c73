"""A pids cgroup for one python worker: a cap on its processes that holds even for root, and a
list of every process it started, so all of them can be killed.

RLIMIT_NPROC (set by the worker itself) is the cap for everyone else, but the kernel does not
apply it to root, so where this process may create a cgroup (root, mostly) the worker starts in
one: ``pids.max`` caps processes and threads together, and ``cgroup.procs`` names every process
of the sandbox, including those that left their session or process group. Where no cgroup can
be made (an unprivileged user, a read-only ``/sys/fs/cgroup``), `open_group` returns None.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import time
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
_KILL_SECONDS = 5.0  # killing a capped group takes milliseconds; this bounds a stubborn one
_names = itertools.count()


class PidsGroup:
    """One cgroup with a ``pids.max``, made for one worker and removed after it."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def wrap(self, command: list[str]) -> list[str]:
        """`command`, started inside this group (a shell joins it, then becomes the command)."""
        procs = str(self.folder / "cgroup.procs")
        return ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', procs, *command]

    def pids(self) -> list[int]:
        """The processes in the group now."""
        try:
            text = (self.folder / "cgroup.procs").read_text()
        except OSError:
            return []
        return [int(line) for line in text.split()]

    def kill(self) -> bool:
        """SIGKILL every process in the group until it is empty; False if some outlived the
        time allowed (a process stuck in the kernel)."""
        deadline = time.monotonic() + _KILL_SECONDS
        while pids := self.pids():
            if time.monotonic() > deadline:
                return False
            kill_all = self.folder / "cgroup.kill"  # cgroup v2: the kernel kills them all
            if kill_all.exists():
                with contextlib.suppress(OSError):
                    kill_all.write_text("1")
            for pid in pids:  # v1: one by one; the cap bounds how many a fork loop can add
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)
        return True

    def remove(self) -> None:
        """Kill what is left and delete the group."""
        self.kill()
        for _ in range(50):  # the last exits are reaped a moment after the kill
            try:
                self.folder.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.02)


def open_group(limit: int) -> PidsGroup | None:
    """A new pids cgroup capped at `limit` processes and threads, or None where this process
    may not make one."""
    if limit <= 0 or not CGROUP_ROOT.is_dir():
        return None
    name = f"gptoss-local-python-{os.getpid()}-{next(_names)}"
    for parent in _parents():
        folder = parent / name
        try:
            folder.mkdir()
        except OSError:
            continue
        try:
            (folder / "pids.max").write_text(str(limit))
        except OSError:  # no pids controller there
            with contextlib.suppress(OSError):
                folder.rmdir()
            continue
        return PidsGroup(folder)
    return None


def possible() -> bool:
    """Whether `open_group` would likely succeed (it is not tried: that would make a group)."""
    return any(os.access(parent, os.W_OK) for parent in _parents())


def _parents() -> list[Path]:
    """Where a group with a pids controller can go: beside our own in the v1 pids hierarchy,
    or (v2) the root of the unified tree, the one cgroup that may hold processes and also pass
    controllers down (a process's own v2 cgroup cannot do both)."""
    found: list[Path] = []
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "pids" in controllers.split(","):
            found.append(CGROUP_ROOT / "pids" / path.lstrip("/"))
    unified = CGROUP_ROOT / "cgroup.subtree_control"
    with contextlib.suppress(OSError):
        if "pids" in unified.read_text().split():
            found.append(CGROUP_ROOT)
    return found
