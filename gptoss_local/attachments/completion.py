"""Paths for the chat box: completing what follows an "@" as it is typed, and finding the
"@path" mentions in a message so that the chat can attach them.

A path with spaces is written `@"my notes.txt"`; `as_mention` writes a path that way when it
needs to.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

# "@" at the start or after whitespace (so "me@example.com" is no mention), then a quoted path
# or one that runs up to the next whitespace.
_MENTION = re.compile(r'(?<!\S)@(?:"([^"\n]+)"|(\S+))')
# Punctuation that ends a sentence rather than a path: "see @notes.md, then".
_TRAILING = ".,;:!?)]}'\""


def complete_path(partial: str, root: Path, limit: int = 50) -> list[str]:
    """Completions of `partial`, what follows "@" so far, as the text that replaces it.

    The part after the last "/" is matched case-insensitively against the names in the
    folder before it, which is taken from `root` unless it is absolute or starts with "~".
    Folders come first and end with "/"; hidden entries are offered only when the typed name
    starts with ".". A folder that cannot be read offers nothing.

    Args:
        partial: What was typed after "@" ("src/ap", "~/Doc", "/etc/ho", "").
        root: The working folder.
        limit: The most completions returned.

    Returns:
        Paths in the form typed ("src/app.py", "src/lib/"), sorted by name within each group.
    """
    if partial == "~":
        return ["~/"]
    head, slash, typed = partial.rpartition("/")
    prefix = head + slash
    folder = Path(os.path.expanduser(prefix)) if prefix else Path()
    folder = folder if folder.is_absolute() else root / folder
    wanted = typed.lower()
    folders: list[str] = []
    files: list[str] = []
    try:
        with os.scandir(folder) as scan:
            for entry in scan:
                if entry.name.startswith(".") and not typed.startswith("."):
                    continue
                if not entry.name.lower().startswith(wanted):
                    continue
                try:
                    is_dir = entry.is_dir()
                except OSError:
                    is_dir = False
                (folders if is_dir else files).append(entry.name)
    except OSError:
        return []
    ordered = [name + "/" for name in sorted(folders, key=str.lower)]
    ordered += sorted(files, key=str.lower)
    return [prefix + name for name in ordered[:limit]]


def mentions(text: str) -> list[str]:
    """The paths mentioned in a message, once each, in order: `@path` at the start or after
    whitespace, up to the next whitespace (a sentence's closing punctuation dropped), or
    `@"path with spaces"` verbatim."""
    found: list[str] = []
    for match in _MENTION.finditer(text):
        quoted, bare = match.groups()
        if quoted is not None:
            path = quoted
        elif bare.startswith('"'):  # a quote not closed yet: still being typed
            continue
        else:
            path = bare if bare in (".", "..") else bare.rstrip(_TRAILING)
        if path and path not in found:
            found.append(path)
    return found


def as_mention(path: str) -> str:
    """`path` as it is written after "@" in the chat box: quoted when it holds whitespace."""
    return f'@"{path}"' if any(ch.isspace() for ch in path) else f"@{path}"
