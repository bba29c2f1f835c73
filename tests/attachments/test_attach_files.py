"""Text and code files become fenced blocks the file cannot close; binaries, images, special
files, missing paths and files too large or too long for the context are refused, each with
what happened."""

from __future__ import annotations

import hashlib
import os
import socket
import sys
from pathlib import Path

import pytest
from attach_helpers import PNG, words

from gptoss_local.attachments import (
    MAX_FILE_BYTES,
    AttachedFile,
    AttachmentRefused,
    estimate_tokens,
    read_attachment,
)


def count(text: str) -> int:
    return len(text.split())


def read(path: Path | str, root: Path, room: int | None = None) -> AttachedFile:
    return read_attachment(Path(path), root=root, count_tokens=count, room=room)


def test_a_code_file_is_a_fenced_block_named_from_the_working_folder(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    source = tmp_path / "src" / "app.py"
    source.write_text("print('hi')\n")
    attached = read("src/app.py", tmp_path)
    assert attached.text == "File: src/app.py\n```python\nprint('hi')\n```"
    assert attached.name == "src/app.py"
    assert attached.path == str(source)
    assert attached.kind == "text"
    assert attached.sha256 == hashlib.sha256(source.read_bytes()).hexdigest()
    assert attached.tokens == count(attached.text)


def test_the_fence_is_longer_than_any_backtick_run_in_the_file(tmp_path: Path) -> None:
    (tmp_path / "doc.py").write_text('DOC = """\n```python\nx = 1\n```\n`````\n"""')
    text = read("doc.py", tmp_path).text
    assert text.startswith("File: doc.py\n``````python\n")
    assert text.endswith('"""\n``````')


@pytest.mark.parametrize(
    ("name", "language"),
    [("a.rs", "rust"), ("b.TS", "typescript"), ("c.yml", "yaml"), ("Makefile", "makefile"),
     ("notes.txt", ""), ("data.unknownext", "")],
)  # fmt: skip
def test_the_language_comes_from_the_extension(tmp_path: Path, name: str, language: str) -> None:
    (tmp_path / name).write_text("x")
    assert read(name, tmp_path).text == f"File: {name}\n```{language}\nx\n```"


def test_a_bom_is_dropped_and_line_ends_made_plain(tmp_path: Path) -> None:
    path = tmp_path / "bom.md"
    path.write_bytes(b"\xef\xbb\xbf# T\xc3\xadtulo\r\nline\r\n")
    attached = read(path, tmp_path)
    assert attached.text == "File: bom.md\n```markdown\n# Título\nline\n```"
    assert attached.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_an_empty_file_is_an_empty_block(tmp_path: Path) -> None:
    (tmp_path / "empty.txt").write_bytes(b"")
    assert read("empty.txt", tmp_path).text == "File: empty.txt\n```\n```"


def test_a_path_outside_the_working_folder_keeps_its_absolute_name(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("far")
    attached = read(outside, tmp_path / "work")
    assert attached.name == str(outside)
    assert read("../elsewhere.txt", tmp_path / "work").name == str(outside)


def test_an_image_is_refused_by_its_bytes_whatever_its_name(tmp_path: Path) -> None:
    (tmp_path / "picture.dat").write_bytes(PNG + bytes(64))
    with pytest.raises(AttachmentRefused, match=r"picture\.dat is an image: gpt-oss reads text"):
        read("picture.dat", tmp_path)


def test_a_binary_with_an_image_extension_is_refused_as_an_image(tmp_path: Path) -> None:
    (tmp_path / "photo.jpg").write_bytes(b"\0\x01\x02 not a real jpeg")
    with pytest.raises(AttachmentRefused, match="is an image"):
        read("photo.jpg", tmp_path)


@pytest.mark.parametrize(
    "data", [os.urandom(4096) + b"\xff\xfe", b"text with a NUL\0 inside", b"\xc3\x28 bad utf-8"]
)
def test_other_binaries_are_refused_with_their_size(tmp_path: Path, data: bytes) -> None:
    (tmp_path / "blob.bin").write_bytes(data)
    with pytest.raises(AttachmentRefused) as refused:
        read("blob.bin", tmp_path)
    assert str(refused.value) == (
        f"blob.bin is a binary file ({len(data):,} bytes): gpt-oss reads text only."
    )


def test_a_missing_path_is_refused_naming_the_working_folder(tmp_path: Path) -> None:
    with pytest.raises(AttachmentRefused) as refused:
        read("nope/missing.txt", tmp_path)
    assert str(refused.value).startswith("nope/missing.txt: no such file or folder.")
    assert refused.value.hint and str(tmp_path) in refused.value.hint


def test_a_path_under_a_file_is_missing(tmp_path: Path) -> None:
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(AttachmentRefused, match="no such file or folder"):
        read("file.txt/inner", tmp_path)


def test_a_file_that_cannot_be_read_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "secret.txt").write_text("x")

    def denied(self: Path) -> bytes:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_bytes", denied)
    with pytest.raises(AttachmentRefused, match=r"^secret\.txt cannot be read: permission denied"):
        read("secret.txt", tmp_path)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX special files")
def test_devices_pipes_and_sockets_are_refused_before_reading(tmp_path: Path) -> None:
    with pytest.raises(AttachmentRefused, match="/dev/null is a device, not a file or folder"):
        read("/dev/null", tmp_path)
    os.mkfifo(tmp_path / "pipe")  # reading it would block forever
    with pytest.raises(AttachmentRefused, match="pipe is a named pipe"):
        read("pipe", tmp_path)
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tmp_path / "sock"))
        with pytest.raises(AttachmentRefused, match="sock is a socket"):
            read("sock", tmp_path)


def test_a_file_over_the_limit_is_refused_before_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with (tmp_path / "huge.log").open("wb") as out:
        out.truncate(MAX_FILE_BYTES + 1)  # sparse: no 20 MiB written

    def never(self: Path) -> bytes:
        raise AssertionError("read")

    monkeypatch.setattr(Path, "read_bytes", never)
    with pytest.raises(AttachmentRefused) as refused:
        read("huge.log", tmp_path)
    assert str(refused.value).startswith("huge.log is 20.0 MiB; files over 20.0 MiB are not")


def test_an_attachment_longer_than_the_room_left_is_refused_with_both_numbers(
    tmp_path: Path,
) -> None:
    # The block adds four words to the file's: "File:", the name, and the two fences.
    (tmp_path / "report.txt").write_text(words(12_345 - 4))
    with pytest.raises(AttachmentRefused) as refused:
        read("report.txt", tmp_path, room=4_000)
    assert str(refused.value).splitlines() == [
        "report.txt is 12,345 tokens; the context has room for 4,000 more.",
        "Load the model with a larger context (F9 / --context), or attach part of it.",
    ]


def test_an_attachment_that_fits_the_room_exactly_is_taken(tmp_path: Path) -> None:
    (tmp_path / "report.txt").write_text(words(96))
    assert read("report.txt", tmp_path, room=100).tokens == 100


def test_the_estimate_counts_tokens_when_there_is_no_tokenizer(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("abcd" * 100)
    attached = read_attachment(Path("a.txt"), root=tmp_path, count_tokens=estimate_tokens)
    assert attached.tokens == estimate_tokens(attached.text)
