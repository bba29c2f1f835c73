"""A folder as the model reads it: a listing of what is in it, then as many of its text files
as fit a token budget, shallow ones first (a project's README and top-level files say more
about it than a file five folders down).

Hidden entries (.git, .venv, ...) and dependency or cache folders are neither listed nor read;
symbolic links to folders are listed but not followed, so a link loop cannot trap the walk.
"""

from __future__ import annotations

import itertools
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from gptoss_local.attachments.blocks import classify, code_block, fence_for
from gptoss_local.attachments.model import MAX_FILE_BYTES

SKIPPED_FOLDERS = frozenset({"node_modules", "__pycache__", ".git", ".venv"})
LISTING_LIMIT = 500  # entries shown in the listing
WALK_LIMIT = 20_000  # entries walked at most: attaching a home folder must not stall the chat
# No tokenizer packs more bytes than this into one token of real text, so a file this many
# times larger than the tokens left cannot fit, and is left out without being read.
BYTES_PER_TOKEN_CEILING = 32


@dataclass
class _Tally:
    """What became of the folder's files."""

    blocks: list[str] = field(default_factory=list)
    left_out: int = 0  # text (or maybe text) that did not fit the budget
    not_text: int = 0  # binaries, PDFs, images, unreadable and special files


def folder_block(folder: Path, name: str, count_tokens: Callable[[str], int], budget: int) -> str:
    """The text the model reads for `folder`, shown as `name`: a header with counts, the
    listing in a fenced block, then the included files' blocks."""
    entries = list(itertools.islice(_walk(folder, ""), WALK_LIMIT + 1))
    stopped = len(entries) > WALK_LIMIT
    entries = entries[:WALK_LIMIT]
    listing = _listing(entries, stopped)
    files = sorted((rel for rel, is_dir in entries if not is_dir), key=_shallow_first)
    prefix = "" if name == "." else name.rstrip("/") + "/"
    tally = _Tally()
    used = count_tokens(listing)
    for rel in files:
        used += _include(folder / rel, prefix + rel, count_tokens, budget - used, tally)
    header = _header(name, len(files), len(entries) - len(files), stopped, tally)
    return "\n\n".join([f"{header}\n{listing}", *tally.blocks])


def _header(name: str, files: int, folders: int, stopped: bool, tally: _Tally) -> str:
    """The folder's first line, e.g. "Folder: src (12 files, 3 folders; 5 text files included,
    7 left out for the token budget)", with the files that are not text and where the walk
    stopped when that happened."""
    found = f"{_n(files, 'file')}, {_n(folders, 'folder')}"
    if stopped:
        found += f" (the walk stopped at {WALK_LIMIT:,} entries)"
    parts = [
        found,
        f"{_n(len(tally.blocks), 'text file')} included, "
        f"{tally.left_out:,} left out for the token budget",
    ]
    if tally.not_text:
        parts.append(f"{tally.not_text:,} not text (listed only)")
    return f"Folder: {name} ({'; '.join(parts)})"


def _walk(directory: Path, prefix: str) -> Iterator[tuple[str, bool]]:
    """(relative path, is a folder) for everything under `directory`, depth first, by name."""
    try:
        with os.scandir(directory) as scan:
            children = sorted(scan, key=lambda entry: entry.name)
    except OSError:  # unreadable: listed by its parent, its contents left unknown
        return
    for child in children:
        if child.name.startswith(".") or child.name in SKIPPED_FOLDERS:
            continue
        try:
            is_dir = child.is_dir(follow_symlinks=False)
        except OSError:
            continue
        yield prefix + child.name, is_dir
        if is_dir:
            yield from _walk(Path(child.path), f"{prefix}{child.name}/")


def _listing(entries: list[tuple[str, bool]], stopped: bool) -> str:
    lines = [rel + "/" if is_dir else rel for rel, is_dir in entries[:LISTING_LIMIT]]
    hidden = len(entries) - LISTING_LIMIT
    if hidden > 0:
        lines.append(f"… {'more than ' if stopped else ''}{hidden:,} more")
    body = "\n".join(lines) if lines else "(empty)"
    fence = fence_for(body)
    return f"{fence}\n{body}\n{fence}"


def _include(
    path: Path, name: str, count_tokens: Callable[[str], int], room: int, tally: _Tally
) -> int:
    """Adds the file's block to `tally` when it is text and fits `room`; the tokens used."""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):  # a link to a folder, a pipe (would block), ...
            tally.not_text += 1
            return 0
        if info.st_size > min(MAX_FILE_BYTES, max(room, 0) * BYTES_PER_TOKEN_CEILING):
            tally.left_out += 1
            return 0
        data = path.read_bytes()
    except OSError:
        tally.not_text += 1
        return 0
    text = classify(name, data)[1]
    if text is None:
        tally.not_text += 1
        return 0
    block = code_block(name, text)
    tokens = count_tokens(block)
    if tokens > room:
        tally.left_out += 1
        return 0
    tally.blocks.append(block)
    return tokens


def _shallow_first(rel: str) -> tuple[int, str]:
    return rel.count("/"), rel


def _n(count: int, word: str) -> str:
    """'1 file', '3 files' (English: the model reads it)."""
    return f"{count:,} {word}" if count == 1 else f"{count:,} {word}s"
