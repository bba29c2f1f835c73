"""Reading a file of a docs folder so that it can never lead out of it: the one way the browser's
`open` and the indexer read a document.

A path checked and then opened again by name can be swapped in between (a file replaced by a
link to one outside the folder). So the file is opened once, walking from the folder's own
descriptor one name at a time with ``O_NOFOLLOW``; a link met on the way is read and followed
here only if it stays inside the folder (into no hidden or dependency entry, as `walk` would
go), and what was opened is checked with `fstat` (a regular file, not too large) and read from
that same descriptor.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePath

from gptoss_local.library.reading import MAX_FILE_BYTES, MAX_PDF_BYTES, Skipped, hidden

MAX_LINKS = 40  # links followed in one path, as a kernel allows: a loop ends
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_BASE = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
# Where `open` takes a directory's descriptor (not on Windows), the walk below is used.
BENEATH = bool(_NOFOLLOW and _DIRECTORY) and {os.open, os.readlink} <= os.supports_dir_fd
# What `open` answers for a link when told not to follow it: Linux and macOS ELOOP, FreeBSD
# EMLINK; ENOTDIR where a directory was asked for.
_LINK_ERRORS = frozenset({errno.ELOOP, errno.EMLINK, errno.ENOTDIR})


def identity(info: os.stat_result) -> tuple[int, ...]:
    """What tells a file's content apart: the same file, unchanged (size, mtime and ctime, which
    a writer cannot set back)."""
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def limit_of(path: str | PurePath) -> int:
    """The largest file of this name that is read (PDFs may be larger than text)."""
    return MAX_PDF_BYTES if PurePath(path).suffix.lower() == ".pdf" else MAX_FILE_BYTES


@contextmanager
def opened(folder: str, path: str) -> Iterator[tuple[int, os.stat_result]]:
    """The descriptor of the regular file `path` inside `folder`, and its `fstat`; closed after.

    Raises:
        Skipped: "outside" (it, or a link on its way, leads out of `folder` or into a hidden
            or dependency entry), "too_large", "unreadable" (not a regular file: a folder,
            a FIFO, a device; a link loop).
        OSError: It cannot be opened (gone, no permission).
    """
    fd = _open_beneath(folder, path) if BENEATH else _open_checked(folder, path)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Skipped("unreadable")
        if info.st_size > limit_of(path):
            raise Skipped("too_large")
        yield fd, info
    finally:
        os.close(fd)


def read(fd: int, path: str | PurePath) -> bytes:
    """The bytes of an `opened` file, at most its limit (it may have grown since `fstat`).

    Raises:
        Skipped: "too_large".
    """
    limit = limit_of(path)
    with os.fdopen(fd, "rb", closefd=False) as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise Skipped("too_large")
    return data


def read_inside(folder: str, path: str) -> tuple[bytes, os.stat_result]:
    """The bytes of `path` inside `folder` and its `fstat`, as `opened` and `read` give them."""
    with opened(folder, path) as (fd, info):
        return read(fd, path), info


def _parts(folder: str, path: str) -> list[str]:
    """`path`'s names below `folder` (as named, or as its real path)."""
    wanted = Path(os.path.abspath(path))
    for base in (Path(os.path.abspath(folder)), Path(os.path.realpath(folder))):
        if wanted.is_relative_to(base):
            return list(wanted.relative_to(base).parts)
    raise Skipped("outside")


def _open_beneath(folder: str, path: str) -> int:
    """Walk from `folder`'s descriptor, one name at a time, never letting the system follow a
    link; returns the final descriptor (opened non-blocking, so a FIFO cannot hang it)."""
    todo = _parts(folder, path)[::-1]
    held = [os.open(folder, _BASE | _DIRECTORY)]  # the folder itself may be a link: it was named
    links = 0
    try:
        while todo:
            part = todo.pop()
            if part in ("", "."):
                continue
            if part == "..":
                if len(held) == 1:
                    raise Skipped("outside")
                os.close(held.pop())
                continue
            if hidden(part):
                raise Skipped("outside")
            last = not any(p not in ("", ".") for p in todo)
            flags = _BASE | _NOFOLLOW | (os.O_NONBLOCK if last else _DIRECTORY)
            try:
                held.append(os.open(part, flags, dir_fd=held[-1]))
                continue
            except OSError as exc:
                target = _link(exc, part, held[-1])
            links += 1
            if links > MAX_LINKS:
                raise Skipped("unreadable")
            if os.path.isabs(target):  # start again from the folder
                todo.extend(_parts(folder, target)[::-1])
                while len(held) > 1:
                    os.close(held.pop())
            else:
                todo.extend(PurePath(target).parts[::-1])
        if len(held) == 1:
            raise Skipped("unreadable")  # the folder itself
        return held.pop()
    finally:
        for fd in held:
            os.close(fd)


def _link(error: OSError, part: str, parent: int) -> str:
    """Where the link `part` points, when `error` was the refusal to follow it; else `error`."""
    if error.errno not in _LINK_ERRORS:
        raise error
    try:
        return os.readlink(part, dir_fd=parent)
    except OSError:  # not a link: the error was the file's own (ENOTDIR: not a folder)
        raise error from None


def _open_checked(folder: str, path: str) -> int:
    """Where `open` takes no directory descriptor (Windows): check the real path, open it, then
    check that what was opened is the file at that real path (same device and inode, and that
    path no link), so a swap between the check and the open is refused. Weaker than the walk:
    a folder on the way swapped and swapped back in that window is not seen."""
    real = os.path.realpath(path)
    root = os.path.realpath(folder)
    try:
        inside = os.path.commonpath([root, real]) == root and real != root
    except ValueError:  # on another drive
        inside = False
    if not inside:
        raise Skipped("outside")
    if any(hidden(part) for part in Path(real).relative_to(root).parts):
        raise Skipped("outside")
    fd = os.open(real, _BASE | getattr(os, "O_NONBLOCK", 0))
    try:
        seen, info = os.lstat(real), os.fstat(fd)
    except OSError:
        os.close(fd)
        raise
    if stat.S_ISLNK(seen.st_mode) or (seen.st_dev, seen.st_ino) != (info.st_dev, info.st_ino):
        os.close(fd)
        raise Skipped("outside")
    return fd
