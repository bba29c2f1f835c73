"""A file written by appending, whose bytes are hashed as they are written, on another thread.

Reading the network (or a source file), writing and hashing overlap: sha256 runs at ~1.5-2 GB/s
per core, as fast as a loopback download, so hashing in line would nearly halve the speed.
Writes go straight to the file descriptor (no Python buffer), so the file's size always equals
what was handed to the hasher, even after the process is killed.
"""

from __future__ import annotations

import errno
import hashlib
import os
import queue
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gptoss_local.i18n import _
from gptoss_local.store.errors import DiskFullError, StoreError
from gptoss_local.units import size_text

_NO_SPACE = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}
_os_write = os.write  # a seam for tests that inject write errors
Reader = Callable[[memoryview], int]


class HashingSink:
    """Appends to `path` through a small pool of buffers that a hasher thread hands back."""

    def __init__(self, path: Path, total: int, chunk: int = 1 << 20, buffers: int = 4) -> None:
        self.path, self.total = path, total
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | getattr(os, "O_BINARY", 0), 0o600)
        self.size = os.lseek(self._fd, 0, os.SEEK_END)
        self._hasher: Any = hashlib.sha256()
        self._error: BaseException | None = None
        self._free: queue.SimpleQueue[bytearray] = queue.SimpleQueue()
        for _buffer in range(buffers):
            self._free.put(bytearray(chunk))
        self._todo: queue.Queue[tuple[bytearray, int] | None] = queue.Queue()
        self._thread = threading.Thread(target=self._hash_loop, name="sha256", daemon=True)
        self._thread.start()

    def append_from(self, read: Reader, limit: int) -> int:
        """Read up to `limit` bytes with `read` (a `readinto`), then append and hash them.

        Args:
            read: Fills a memoryview and returns the count; 0 means the end.
            limit: Most bytes to take (at most one buffer's worth is read).

        Returns:
            Bytes appended; 0 at the end of the input.

        Raises:
            DiskFullError: the disk filled up; the bytes written so far are kept.
            StoreError: any other write error.
        """
        buf = self._free.get()
        try:
            n = read(memoryview(buf)[: min(limit, len(buf))])
        except BaseException:
            self._free.put(buf)
            raise
        if n:
            self._write(buf, n)
        else:
            self._free.put(buf)
        return n

    def _write(self, buf: bytearray, n: int) -> None:
        done, error = 0, None
        while done < n and error is None:
            try:
                done += _os_write(self._fd, memoryview(buf)[done:n])
            except OSError as exc:
                error = exc
        self.size += done
        self._todo.put((buf, done))  # the hasher hands the buffer back to the pool
        if error is not None:
            raise self._write_error(error)

    def _hash_loop(self) -> None:
        while (item := self._todo.get()) is not None:
            buf, n = item
            try:
                if self._error is None:
                    self._hasher.update(memoryview(buf)[:n])
            except BaseException as exc:  # reported by hexdigest, never lost
                self._error = exc
            finally:
                self._free.put(buf)
                self._todo.task_done()
        self._todo.task_done()

    def set_hasher(self, hasher: Any) -> None:
        """Continue from `hasher`, the state of the bytes already in the file (on resume)."""
        self._todo.join()
        self._hasher = hasher

    def hexdigest(self) -> str:
        """The sha256 of the bytes written so far.

        Raises:
            StoreError: hashing failed (out of memory, say).
        """
        self._todo.join()
        if self._error is not None:
            raise StoreError(
                _("hashing {path} failed: {error!r}").format(path=self.path, error=self._error)
            )
        return str(self._hasher.hexdigest())

    def restart(self) -> None:
        """Throw away everything written and start from byte 0."""
        self._todo.join()
        os.ftruncate(self._fd, 0)
        os.lseek(self._fd, 0, os.SEEK_SET)
        self._hasher, self.size, self._error = hashlib.sha256(), 0, None

    def finish(self) -> None:
        """Flush to the disk and close, so a power cut after the rename leaves no hole."""
        try:
            os.fsync(self._fd)
        except OSError as exc:
            raise self._write_error(exc) from None
        finally:
            self.close()

    def close(self) -> None:
        """Stop the hasher and close the file (idempotent)."""
        if self._fd < 0:
            return
        self._todo.put(None)
        self._thread.join()
        os.close(self._fd)
        self._fd = -1

    def _write_error(self, exc: OSError) -> StoreError:
        kept = _("The {size:,} bytes written so far are kept in {path}").format(
            size=self.size, path=self.path
        )
        if exc.errno in _NO_SPACE:
            return DiskFullError(
                _(
                    "the disk is full: no room left in {parent} to write {name}. {kept}; "
                    "free at least {size_text} and run the same command again to resume."
                ).format(
                    parent=self.path.parent,
                    name=self.path.name,
                    kept=kept,
                    size_text=size_text(self.total - self.size),
                )
            )
        return StoreError(
            _("cannot write {path}: {error}. {kept}.").format(
                path=self.path, error=exc.strerror or exc, kept=kept
            )
        )
