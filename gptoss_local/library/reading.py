"""Which files of a folder the browser reads, and each one's text and title.

Text, Markdown and code are read as they are; HTML as its text (`html_text`); PDF as the text
of its pages (pypdf, through `attachments.pdf`). Binaries, files over `MAX_FILE_BYTES` and
files that cannot be read are skipped, and so are symbolic links that lead out of the folder
(the user named the folder, not what it links to); each skip is counted by its reason.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Literal

from gptoss_local.attachments.blocks import IMAGE_EXTENSIONS, decode_text, is_image, is_pdf
from gptoss_local.attachments.blocks import language as code_language
from gptoss_local.attachments.folder import SKIPPED_FOLDERS
from gptoss_local.attachments.model import AttachmentRefused
from gptoss_local.attachments.pdf import page_texts
from gptoss_local.library.html_text import html_text

Kind = Literal["text", "markdown", "code", "html", "pdf"]
SkipReason = Literal["binary", "too_large", "unreadable", "outside"]
SKIP_REASONS: tuple[SkipReason, ...] = ("binary", "too_large", "unreadable", "outside")
# Larger files are skipped unread: a 10 MiB text is a log or a dump, not notes to browse.
MAX_FILE_BYTES = 10 * 1024 * 1024
MAX_PDF_BYTES = 50 * 1024 * 1024
# Known binaries are skipped by name, without reading them.
BINARY_EXTENSIONS = IMAGE_EXTENSIONS | frozenset({
    "zip", "gz", "tgz", "bz2", "xz", "zst", "7z", "rar", "tar", "jar", "whl", "so", "dll",
    "dylib", "exe", "bin", "o", "a", "lib", "pyc", "class", "gguf", "safetensors", "pt", "onnx",
    "mp3", "mp4", "mkv", "mov", "avi", "wav", "flac", "ogg", "ico", "icns", "woff", "woff2",
    "ttf", "otf", "sqlite", "sqlite3", "db", "iso", "dmg", "psd", "xcf", "docx", "xlsx", "pptx",
})  # fmt: skip
_MARKDOWN = frozenset({"md", "markdown", "mdx"})
_HTML = frozenset({"html", "htm", "xhtml"})
_HEADING = re.compile(r"#{1,6}\s+(.+?)\s*#*\s*$")


class Skipped(Exception):
    """A file the browser does not read, and why (one of `SKIP_REASONS`)."""

    def __init__(self, reason: SkipReason) -> None:
        super().__init__(reason)
        self.reason: SkipReason = reason


@dataclass(frozen=True)
class Document:
    """A file as the browser reads it: its kind, its title (a Markdown or HTML heading, else
    the file's name) and its text, lines ending in "\\n"."""

    kind: Kind
    title: str
    text: str


@dataclass(frozen=True)
class Found:
    """A regular file met by `walk`, with the size and mtime that tell whether it changed."""

    path: Path
    size: int
    mtime_ns: int


def kind_of(name: str) -> Kind:
    """What a file is by its name; text that is neither Markdown, HTML nor code is "text"."""
    suffix = PurePath(name).suffix[1:].lower()
    if suffix in _MARKDOWN:
        return "markdown"
    if suffix in _HTML:
        return "html"
    if suffix == "pdf":
        return "pdf"
    return "code" if code_language(name) else "text"


def read_document(path: Path, data: bytes) -> Document:
    """The document in `data`, the bytes of `path`.

    Raises:
        Skipped: "binary" (not text, and not a PDF), "unreadable" (a damaged, locked or
            scanned PDF).
    """
    name = path.name
    if is_pdf(data):
        return _pdf(name, data)
    if is_image(data[:16]) or PurePath(name).suffix[1:].lower() in BINARY_EXTENSIONS:
        raise Skipped("binary")
    text = decode_text(data)
    if text is None:
        raise Skipped("binary")
    kind = kind_of(name)
    if kind == "pdf":  # named .pdf but text: read as text
        kind = "text"
    if kind == "html":
        title, text = html_text(text)
        return Document("html", title or name, text)
    title = _markdown_title(text) if kind == "markdown" else ""
    return Document(kind, title or name, text)


def _pdf(name: str, data: bytes) -> Document:
    try:
        pages = page_texts(name, data)
    except AttachmentRefused:
        raise Skipped("unreadable") from None
    if not any(page.strip() for page in pages):
        raise Skipped("unreadable")  # scanned pages: no text layer to read
    # Each page starts with its number, so the model (and a citation) can say where.
    text = "".join(f"--- page {n} ---\n{page.strip()}\n\n" for n, page in enumerate(pages, 1))
    return Document("pdf", name, text)


def _markdown_title(text: str) -> str:
    for line in text.splitlines()[:50]:
        found = _HEADING.match(line)
        if found:
            return found.group(1)
    return ""


def too_large(path: Path, size: int) -> bool:
    """Whether a file of `size` bytes is skipped unread ("too_large")."""
    limit = MAX_PDF_BYTES if path.suffix.lower() == ".pdf" else MAX_FILE_BYTES
    return size > limit


def hidden(name: str) -> bool:
    """Whether the walk passes over an entry of this name: a hidden one (a dot-file or
    dot-folder: keys, tokens, a repository's internals) or a dependency folder."""
    return name.startswith(".") or name in SKIPPED_FOLDERS


def left_out(folder: Path, path: Path) -> bool:
    """Whether `path` under `folder` is one the walk passes over (a `hidden` entry on its way)."""
    return any(hidden(part) for part in path.relative_to(folder).parts)


def walk(folder: Path) -> Iterator[Found | Skipped]:
    """Every regular file under `folder` (hidden entries and dependency folders left out),
    and a `Skipped` for each entry passed over: a symbolic link that leads outside `folder`
    ("outside"), a folder that cannot be listed ("unreadable"). Links inside are followed,
    each real folder once, so a link loop ends."""
    root = os.path.realpath(folder)
    seen = {root}
    stack = [Path(folder)]
    while stack:
        directory = stack.pop()
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            yield Skipped("unreadable")
            continue
        for entry in entries:
            if hidden(entry.name):
                continue
            found = _entry(entry, root, seen)
            if isinstance(found, Path):
                stack.append(found)
            elif found is not None:
                yield found


def _entry(entry: os.DirEntry[str], root: str, seen: set[str]) -> Path | Found | Skipped | None:
    """A folder to walk into, a file, a skip, or None (a special file, or a folder seen)."""
    try:
        if entry.is_symlink():
            real = os.path.realpath(entry.path)
            if os.path.commonpath([root, real]) != root:
                return Skipped("outside")
            info = os.stat(entry.path)
        else:
            real = entry.path
            info = entry.stat(follow_symlinks=False)
    except (OSError, ValueError):  # a dangling link, or a path on another drive
        return Skipped("unreadable")
    if stat.S_ISDIR(info.st_mode):
        key = os.path.realpath(real)
        if key in seen:
            return None
        seen.add(key)
        return Path(entry.path)
    if stat.S_ISREG(info.st_mode):
        return Found(Path(entry.path), info.st_size, info.st_mtime_ns)
    return None
