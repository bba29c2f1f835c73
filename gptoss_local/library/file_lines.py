"""A file's page lines, wrapped at 80 columns, held compactly: one string and two arrays, not a
string and an `Origin` per line (4 million short lines were 715 MB as lists), built in time
linear in the text.

Lines are wrapped as ``textwrap.wrap`` does (tabs expanded, whitespace kept, long words cut),
by `_wrap_fast` where that is the same (no hyphen in the line) and by textwrap itself for
hyphenated lines up to `TEXTWRAP_CHARS` of them per file, past which hyphens are no longer
break points: textwrap takes ~0.6 s per MiB and a long word costs it quadratic time.
"""

from __future__ import annotations

import re
import sys
import textwrap
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import overload

WIDTH = 80
TEXTWRAP_CHARS = 1 << 20
_BLOCK = 1 << 18  # characters scanned at a time (the transient lists stay small)
_WS = r"\t\n\x0b\x0c\r "  # textwrap's whitespace
# The longest start of at most WIDTH characters that ends between a word and a space.
_FIT = re.compile(rf"(?s).{{0,{WIDTH - 1}}}(?:[^{_WS}](?=[{_WS}])|[{_WS}](?=[^{_WS}]))")
_LONG_CHUNK = re.compile(rf"[^{_WS}]{{{WIDTH + 1}}}|[{_WS}]{{{WIDTH + 1}}}")


@dataclass(frozen=True)
class Origin:
    """The file a page line shows and its line there (from 0)."""

    path: str
    name: str
    line: int


def wrap(line: str, exact: bool = True) -> list[str]:
    """A line as page lines of at most `WIDTH` columns (an empty line stays one line), as
    textwrap wraps it; `exact=False` does not break at hyphens (linear time)."""
    if not line:
        return [""]
    line = line.expandtabs()
    if len(line) <= WIDTH:
        return [line]
    if exact and "-" in line:
        return textwrap.wrap(line, width=WIDTH, replace_whitespace=False, drop_whitespace=False)
    return _wrap_fast(line)


def _wrap_fast(line: str) -> list[str]:
    """textwrap's greedy fill for a line without hyphens: as many whole words and spaces as
    fit, and a word (or space) longer than a line cut to fill it."""
    pieces, pos = [], 0
    while len(line) - pos > WIDTH:
        fit = _FIT.match(line, pos)
        end = fit.end() if fit else pos + WIDTH
        if fit and _LONG_CHUNK.match(line, end):
            end = pos + WIDTH
        pieces.append(line[pos:end])
        pos = end
    pieces.append(line[pos:])
    return pieces


class _Block:
    """Whole file lines from `line` as page lines from `first`: their text joined by newlines,
    where each starts (made when first needed where they are the file's lines as they are)
    and, where wrapping made more page lines than file lines, the file line of each."""

    def __init__(self, text: str, first: int, line: int, numbers: array[int] | None) -> None:
        self.text, self.first, self.line, self.numbers = text, first, line, numbers
        self.count = len(numbers) if numbers is not None else text.count("\n") + 1
        self._starts: array[int] | None = None

    @property
    def starts(self) -> array[int]:
        if self._starts is None:
            lengths = map((1).__add__, map(len, self.text.split("\n")[:-1]))
            self._starts = array("I", accumulate(lengths, initial=0))
        return self._starts

    def __getitem__(self, index: int) -> str:
        start = self.starts[index]
        end = self.starts[index + 1] - 1 if index + 1 < self.count else len(self.text)
        return self.text[start:end]

    def number(self, index: int) -> int:
        return self.line + index if self.numbers is None else self.numbers[index]

    def nbytes(self) -> int:
        held = [a for a in (self._starts, self.numbers) if a is not None]
        return sys.getsizeof(self.text) + sum(a.itemsize * len(a) for a in held)


class FileLines(Sequence[str]):
    """A file's page lines, in blocks of about `_BLOCK` characters (`_Block`)."""

    def __init__(self, blocks: list[_Block]) -> None:
        self.blocks = blocks
        self._firsts = [block.first for block in blocks]
        self._lines = [block.line for block in blocks]
        self._count = blocks[-1].first + blocks[-1].count

    @classmethod
    def of(cls, text: str) -> FileLines:
        """The page lines of a document's `text` (its final newline ends a line, not starts
        one); brackets that would read as citations are swapped for look-alikes."""
        text = text.replace("【", "〖").replace("】", "〗")
        text = text[:-1] if text.endswith("\n") else text
        blocks: list[_Block] = []
        budget = [TEXTWRAP_CHARS]
        first = line = pos = 0
        while True:
            end = text.find("\n", pos + _BLOCK)
            end = len(text) if end < 0 else end
            block = _block(text[pos:end], first, line, budget)
            blocks.append(block)
            first += block.count
            line = block.number(block.count - 1) + 1
            if end == len(text):
                return cls(blocks)
            pos = end + 1

    @property
    def nbytes(self) -> int:
        """About what it holds in memory."""
        return sum(block.nbytes() for block in self.blocks)

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[n] for n in range(*index.indices(len(self)))]
        block, at = self._at(index)
        return block[at]

    def __iter__(self) -> Iterator[str]:
        for block in self.blocks:
            yield from block.text.split("\n")

    def number(self, index: int) -> int:
        """The file line (from 0) that page line `index` shows."""
        block, at = self._at(index)
        return block.number(at)

    def line_of(self, line: int) -> int:
        """The first page line that shows file line `line` or a later one (0 if none)."""
        block = self.blocks[max(bisect_right(self._lines, line) - 1, 0)]
        if block.numbers is None:
            at = max(line - block.line, 0)
            return block.first + at if at < block.count else 0
        found = bisect_left(block.numbers, line)
        return block.first + found if found < block.count else 0

    def find(self, wanted: str, start: int) -> int | None:
        """The first line from `start` that holds `wanted` (lower case), ignoring case."""
        if start >= len(self) or "\n" in wanted:
            return None
        first, at = self._at(start)
        for block in self.blocks[self.blocks.index(first) :]:
            found = _find(block, wanted, at)
            if found is not None:
                return block.first + found
            at = 0
        return None

    def _at(self, index: int) -> tuple[_Block, int]:
        if not -self._count <= index < self._count:
            raise IndexError("page line out of range")
        index %= self._count
        block = self.blocks[bisect_right(self._firsts, index) - 1]
        return block, index - block.first


def _find(block: _Block, wanted: str, at: int) -> int | None:
    """The first of `block`'s lines from `at` that holds `wanted`, ignoring case."""
    lowered = block.text.lower()
    if len(lowered) != len(block.text):  # lower case changed lengths: line by line
        return next((n for n in range(at, block.count) if wanted in block[n].lower()), None)
    found = lowered.find(wanted, block.starts[at])
    return None if found < 0 else bisect_right(block.starts, found) - 1


def _block(text: str, first: int, line: int, budget: list[int]) -> _Block:
    """The page lines of `text`, whole file lines from file line `line`, page line `first`."""
    lines = text.split("\n")
    if "\t" not in text and max(map(len, lines)) <= WIDTH:  # as they are: no Python loop
        return _Block(text, first, line, None)
    shown: list[str] = []
    numbers = array("I")
    for number, each in enumerate(lines, line):
        exact = budget[0] > 0
        if exact and "-" in each and len(each) > WIDTH:
            budget[0] -= len(each)
        pieces = wrap(each, exact)
        shown.extend(pieces)
        numbers.extend([number] * len(pieces))
    return _Block("\n".join(shown), first, line, numbers)


class FileOrigins(Sequence[Origin]):
    """The file line each of a file's page lines shows, made on demand."""

    def __init__(self, path: str, name: str, lines: FileLines) -> None:
        self.path, self.name, self.lines = path, name, lines

    def __len__(self) -> int:
        return len(self.lines)

    @overload
    def __getitem__(self, index: int) -> Origin: ...
    @overload
    def __getitem__(self, index: slice) -> list[Origin]: ...
    def __getitem__(self, index: int | slice) -> Origin | list[Origin]:
        if isinstance(index, slice):
            return [self[n] for n in range(*index.indices(len(self)))]
        return Origin(self.path, self.name, self.lines.number(index))

    def line_of(self, origin: Origin) -> int:
        """The first page line that shows `origin`'s file line or a later one (0 if none)."""
        return self.lines.line_of(origin.line) if origin.path == self.path else 0
