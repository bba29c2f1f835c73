"""Bytes to text for the model: what a file is (text, PDF, image, other binary), its text, and
the fenced Markdown block it is sent in.

The block headers are English and not marked for translation: the model reads them, not the
person (see `gptoss_local.i18n`).
"""

from __future__ import annotations

import codecs
import re
from pathlib import PurePath
from typing import Literal

Sort = Literal["text", "pdf", "image", "binary"]

# The fence's info string, by extension (lower case); an unknown extension gets none.
LANGUAGES: dict[str, str] = {
    "py": "python", "pyi": "python", "js": "javascript", "mjs": "javascript",
    "cjs": "javascript", "jsx": "jsx", "ts": "typescript", "tsx": "tsx", "rs": "rust",
    "go": "go", "c": "c", "h": "c", "cc": "cpp", "cpp": "cpp", "cxx": "cpp", "hpp": "cpp",
    "hh": "cpp", "cs": "csharp", "java": "java", "kt": "kotlin", "swift": "swift",
    "rb": "ruby", "php": "php", "lua": "lua", "r": "r", "jl": "julia", "scala": "scala",
    "json": "json", "jsonl": "json", "toml": "toml", "yaml": "yaml", "yml": "yaml",
    "xml": "xml", "ini": "ini", "cfg": "ini", "md": "markdown", "rst": "rst", "tex": "latex",
    "sh": "sh", "bash": "bash", "zsh": "zsh", "fish": "fish", "ps1": "powershell",
    "bat": "bat", "html": "html", "htm": "html", "css": "css", "scss": "scss", "sql": "sql",
    "csv": "csv", "diff": "diff", "patch": "diff", "vue": "vue", "svelte": "svelte",
    "zig": "zig", "nim": "nim", "hs": "haskell", "ml": "ocaml", "ex": "elixir", "erl": "erlang",
    "dart": "dart", "proto": "protobuf", "graphql": "graphql", "tf": "hcl",
}  # fmt: skip
# Files known by their whole name, which have no extension to go by.
NAMED: dict[str, str] = {
    "Dockerfile": "dockerfile",
    "Makefile": "makefile",
    "CMakeLists.txt": "cmake",
}
IMAGE_EXTENSIONS = frozenset({"png", "jpg", "jpeg", "gif", "webp", "bmp", "tif", "tiff"})
_BACKTICKS = re.compile(r"`+")


def language(name: str) -> str:
    """The fence's language for a file name ("app.py" → "python"), or "" when unknown."""
    path = PurePath(name)
    if path.name in NAMED:
        return NAMED[path.name]
    return LANGUAGES.get(path.suffix[1:].lower(), "")


def fence_for(text: str) -> str:
    """A backtick fence longer than every backtick run in `text` (three at least), so that no
    line of the file can close the block it is in."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    return "`" * max(3, longest + 1)


def code_block(name: str, text: str) -> str:
    """A file's text as the model reads it: "File: name", then the text in a fenced block."""
    fence = fence_for(text)
    body = text if not text or text.endswith("\n") else text + "\n"
    return f"File: {name}\n{fence}{language(name)}\n{body}{fence}"


def decode_text(data: bytes) -> str | None:
    """The text of a UTF-8 file (a BOM dropped, CRLF line ends made LF), or None when the bytes
    are not text: not valid UTF-8, or holding a NUL byte (no text file has one)."""
    if b"\0" in data:
        return None
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text.replace("\r\n", "\n")


def is_image(head: bytes) -> bool:
    """Whether the first bytes of a file are those of PNG, JPEG, GIF, WebP, BMP or TIFF."""
    return (
        head.startswith((b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a"))
        or head.startswith((b"II*\0", b"MM\0*"))
        or (head.startswith(b"RIFF") and head[8:12] == b"WEBP")
        # "BM" alone starts plenty of text; a BMP header has four zero bytes after the size.
        or (head.startswith(b"BM") and head[6:10] == b"\0\0\0\0")
    )


def is_pdf(head: bytes) -> bool:
    """Whether a file is a PDF: "%PDF-" within its first KiB, where readers look for it."""
    return b"%PDF-" in head[:1024]


def classify(name: str, data: bytes) -> tuple[Sort, str | None]:
    """What a file is, and its text when it is text.

    By its bytes first and its extension second: a PDF by "%PDF-", an image by its magic
    bytes, text by decoding; bytes that are not text are an image when the extension says
    so, else some other binary.
    """
    if is_pdf(data):
        return "pdf", None
    if is_image(data[:16]):
        return "image", None
    text = decode_text(data)
    if text is not None:
        return "text", text
    return ("image" if PurePath(name).suffix[1:].lower() in IMAGE_EXTENSIONS else "binary"), None
