"""Reading a path the user attached: a text or code file, a PDF, or a folder, into the
`AttachedFile` the chat sends; anything the model cannot read is refused with the reason.

Reading can take a while (a large PDF, a folder of many files, a tokenizer over megabytes),
so the chat calls this from a worker thread.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable
from pathlib import Path

from gptoss_local.attachments.blocks import classify, code_block
from gptoss_local.attachments.folder import folder_block
from gptoss_local.attachments.model import MAX_FILE_BYTES, AttachedFile, AttachmentRefused, Kind
from gptoss_local.attachments.pdf import pdf_block
from gptoss_local.i18n import _
from gptoss_local.units import size_text


def read_attachment(
    path: Path,
    *,
    root: Path,
    count_tokens: Callable[[str], int],
    room: int | None = None,
    folder_budget: int = 8000,
) -> AttachedFile:
    """Reads `path` for the chat.

    Args:
        path: The file or folder; a relative path is taken from `root`, "~" is expanded.
        root: The working folder, which names are given relative to.
        count_tokens: Counts the tokens of a text (the model's tokenizer, or
            `estimate_tokens` for an engine without one).
        room: Tokens still free in the context; None checks nothing.
        folder_budget: Tokens a folder's files may take, listing included (about).

    Returns:
        The attachment, its `text` ready for `with_attachments`.

    Raises:
        AttachmentRefused: the path is missing or unreadable, not a file or folder, over
            `MAX_FILE_BYTES`, an image or other binary, a PDF without readable text, or more
            tokens than `room`.
    """
    root = Path(os.path.abspath(root.expanduser()))
    absolute = Path(os.path.normpath(root / path.expanduser()))
    name = display_name(absolute, root)
    info = _stat(absolute, name, root)
    kind: Kind
    if stat.S_ISDIR(info.st_mode):
        _check_listable(absolute, name)
        kind, text = "folder", folder_block(absolute, name, count_tokens, folder_budget)
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    else:
        data = _read(absolute, name, info)
        kind, text = _file_text(name, data)
        digest = hashlib.sha256(data).hexdigest()
    tokens = count_tokens(text)
    if room is not None and tokens > room:
        raise AttachmentRefused(
            _("{name} is {tokens} tokens; the context has room for {room} more.").format(
                name=name, tokens=f"{tokens:,}", room=f"{max(room, 0):,}"
            ),
            hint=_("Load the model with a larger context (F9 / --context), or attach part of it."),
        )
    return AttachedFile(name, str(absolute), digest, kind, text, tokens)


def display_name(path: Path, root: Path) -> str:
    """How an attachment is named: relative to `root` ("src/app.py") when inside it, "." for
    `root` itself, else the absolute path. Both paths absolute and normalised."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _stat(path: Path, name: str, root: Path) -> os.stat_result:
    """The path's status, refused when it is missing or unreadable."""
    try:
        return path.stat()
    except (FileNotFoundError, NotADirectoryError) as exc:
        raise AttachmentRefused(
            _("{name}: no such file or folder.").format(name=name),
            hint=_("Relative paths start from the working folder, {root}.").format(root=root),
        ) from exc
    except OSError as exc:
        raise _unreadable(name, exc) from exc


def _unreadable(name: str, exc: OSError) -> AttachmentRefused:
    """The refusal for a path the system will not let us read, with its reason."""
    if isinstance(exc, PermissionError):
        return AttachmentRefused(_("{name} cannot be read: permission denied.").format(name=name))
    reason = exc.strerror or str(exc)
    return AttachmentRefused(_("{name} cannot be read: {reason}.").format(name=name, reason=reason))


def _check_listable(folder: Path, name: str) -> None:
    """Refuses a folder that cannot be listed (its subfolders that cannot be are skipped)."""
    try:
        with os.scandir(folder):
            pass
    except OSError as exc:
        raise _unreadable(name, exc) from exc


def _read(path: Path, name: str, info: os.stat_result) -> bytes:
    """A regular file's bytes, refused before reading when it is not one or is too large."""
    if not stat.S_ISREG(info.st_mode):
        raise AttachmentRefused(
            _(
                "{name} is {what}, not a file or folder: only files and folders can be attached."
            ).format(name=name, what=_special(info.st_mode))
        )
    if info.st_size > MAX_FILE_BYTES:
        raise AttachmentRefused(
            _("{name} is {size}; files over {limit} are not attached.").format(
                name=name, size=size_text(info.st_size), limit=size_text(MAX_FILE_BYTES)
            ),
            hint=_("Attach a smaller file, or the part of it that matters."),
        )
    try:
        return path.read_bytes()
    except OSError as exc:
        raise _unreadable(name, exc) from exc


def _special(mode: int) -> str:
    """What a path that is neither a file nor a folder is, in words."""
    if stat.S_ISSOCK(mode):
        return _("a socket")
    if stat.S_ISFIFO(mode):
        return _("a named pipe")
    return _("a device")


def _file_text(name: str, data: bytes) -> tuple[Kind, str]:
    """The kind and the model's text for a file's bytes; images and binaries refused."""
    sort, text = classify(name, data)
    if sort == "pdf":
        return "pdf", pdf_block(name, data)
    if text is not None:
        return "text", code_block(name, text)
    if sort == "image":
        raise AttachmentRefused(
            _("{name} is an image: gpt-oss reads text only.").format(name=name),
            hint=_("Describe what it shows in words, or paste the text it holds."),
        )
    raise AttachmentRefused(
        _("{name} is a binary file ({size} bytes): gpt-oss reads text only.").format(
            name=name, size=f"{len(data):,}"
        )
    )
