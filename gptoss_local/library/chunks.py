"""A document's text cut into the passages the index ranks: a search finds the passage, and the
result opens the file there, not at its top.

Passages end at a blank line or a heading once they hold `CHUNK_CHARS`, and at any line once
they hold twice that, so a paragraph is rarely cut and a file without blank lines still is.
"""

from __future__ import annotations

from collections.abc import Iterator

CHUNK_CHARS = 1200


def chunk(text: str, size: int = CHUNK_CHARS) -> Iterator[tuple[int, str]]:
    """(first line, from 0; the passage's text) for each passage of `text`."""
    lines = text.split("\n")
    start, count = 0, 0
    held: list[str] = []
    for number, line in enumerate(lines):
        boundary = not line.strip() or line.startswith("#")
        if held and ((count >= size and boundary) or count >= 2 * size):
            yield start, "\n".join(held)
            start, held, count = number, [], 0
        held.append(line)
        count += len(line) + 1
    if any(line.strip() for line in held):
        yield start, "\n".join(held)
