"""Bounded sequential reads of an untrusted file, and the error that refuses it."""

from __future__ import annotations

import struct
from typing import BinaryIO

_CHUNK = 64 * 1024  # read-ahead; at most this much past the tensor infos is ever read
_U64 = struct.Struct("<Q")


class Problem(Exception):
    """Why a file is refused, worded to follow its path: "is truncated: ..."."""


def show(name: str) -> str:
    """Quotes an untrusted name for a message, cut short so it cannot flood the terminal."""
    return repr(name if len(name) <= 80 else name[:77] + "...")


class Stream:
    """Sequential reads through a small window; `where` names the part being read."""

    def __init__(self, f: BinaryIO, size: int) -> None:
        self._f, self.size = f, size
        self._buf, self._base, self._pos = b"", 0, 0
        self.where = "the header"

    def tell(self) -> int:
        return self._base + self._pos

    def remaining(self) -> int:
        return self.size - self.tell()

    def read(self, n: int) -> bytes:
        """Returns exactly `n` bytes; callers bound `n` before asking."""
        if n > self.remaining():
            raise self.truncated()
        if self._pos + n > len(self._buf):
            start = self.tell()
            self._f.seek(start)
            self._buf, self._base, self._pos = self._f.read(max(n, _CHUNK)), start, 0
            if len(self._buf) < n:  # the file shrank while we were reading it
                raise self.truncated()
        self._pos += n
        return self._buf[self._pos - n : self._pos]

    def skip(self, n: int) -> None:
        if n > self.remaining():
            raise self.truncated()
        if self._pos + n <= len(self._buf):
            self._pos += n
        else:
            self._buf, self._base, self._pos = b"", self.tell() + n, 0

    def skip_strings(self, count: int, limit: int, unique: bool = False) -> tuple[int, int] | None:
        """Skips `count` strings; returns (index, length) of the first one that does not fit,
        or with `unique`, (index, -1) of the first one that repeats an earlier one.

        The vocabulary has ~200,000 strings, so this works on the window directly.
        """
        kept: list[bytes] = []
        for j in range(count):
            if self._pos + 8 <= len(self._buf):
                n = _U64.unpack_from(self._buf, self._pos)[0]
                self._pos += 8
            else:
                n = self.integer(_U64)
            if n > limit or self._base + self._pos + n > self.size:
                return j, n
            if self._pos + n <= len(self._buf):
                if unique:
                    kept.append(self._buf[self._pos : self._pos + n])
                self._pos += n
            elif unique:
                kept.append(self.read(n))
            else:
                self.skip(n)
        return _first_repeat(kept) if len(set(kept)) < len(kept) else None

    def unpack(self, fmt: struct.Struct) -> int | float:
        value: int | float = fmt.unpack(self.read(fmt.size))[0]
        return value

    def integer(self, fmt: struct.Struct) -> int:
        return int(self.unpack(fmt))

    def truncated(self) -> Problem:
        return Problem(
            f"is truncated: it ends at byte {self.size:,}, inside {self.where}; download it again"
        )


def _first_repeat(items: list[bytes]) -> tuple[int, int]:
    seen: set[bytes] = set()
    for j, item in enumerate(items):
        if item in seen:
            return j, -1
        seen.add(item)
    raise AssertionError("no repeat")  # only called when there is one
