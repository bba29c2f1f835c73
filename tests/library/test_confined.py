"""Reading a document without leaving its folder (`library.confined`), as the browser's `open`
and the indexer read: links inside are followed, links out (a component in the middle, the
file itself, an absolute or a relative target, ``..``), into hidden entries or in a loop are
refused, and so are FIFOs and sockets, without hanging. Each case runs on the descriptor walk
and on the Windows fallback (check after open), which runs here too when asked for."""

from __future__ import annotations

import os
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from gptoss_local.library import Library, confined
from gptoss_local.library.confined import read_inside
from gptoss_local.library.reading import MAX_FILE_BYTES, Skipped

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="links and FIFOs of POSIX")


@pytest.fixture(params=["beneath", "checked"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "checked":
        monkeypatch.setattr(confined, "BENEATH", False)
    elif not confined.BENEATH:
        pytest.skip("no directory descriptors here")
    return str(request.param)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """notes/ with a file, a sub-folder, and a secret next to it (outside)."""
    notes = tmp_path / "notes"
    (notes / "sub").mkdir(parents=True)
    (notes / "sub" / "inner.md").write_text("inner text\n")
    (notes / "plain.md").write_text("plain text\n")
    (notes / ".hidden").mkdir()
    (notes / ".hidden" / "key.md").write_text("hidden key\n")
    (tmp_path / "away").mkdir()
    (tmp_path / "away" / "secret.md").write_text("outside secret\n")
    return notes


def skip_reason(folder: Path, path: Path) -> str:
    with pytest.raises(Skipped) as skipped:
        read_inside(str(folder), str(path))
    return skipped.value.reason


@posix_only
def test_files_and_links_inside_are_read(folder: Path, mode: str) -> None:
    (folder / "alias.md").symlink_to("plain.md")
    (folder / "absolute.md").symlink_to(folder / "sub" / "inner.md")
    (folder / "subway").symlink_to("sub")
    (folder / "sub" / "up.md").symlink_to("../plain.md")
    cases = {"plain.md": "plain", "alias.md": "plain", "absolute.md": "inner",
             "subway/inner.md": "inner", "sub/up.md": "plain"}  # fmt: skip
    for name, text in cases.items():
        data, info = read_inside(str(folder), str(folder / name))
        assert data.decode().startswith(text) and info.st_size == len(data), name


@posix_only
def test_links_out_of_the_folder_are_refused_wherever_they_are(folder: Path, mode: str) -> None:
    away = folder.parent / "away"
    (folder / "final.md").symlink_to(away / "secret.md")  # the file itself
    (folder / "middle").symlink_to(away)  # a folder on the way
    (folder / "relative.md").symlink_to("../away/secret.md")
    (folder / "sub" / "deep").symlink_to("../../away")
    (folder / "key.md").symlink_to(".hidden/key.md")  # inside, but into a hidden entry
    for name in ("final.md", "middle/secret.md", "relative.md", "sub/deep/secret.md", "key.md"):
        assert skip_reason(folder, folder / name) == "outside", name
    assert skip_reason(folder, folder / ".hidden" / "key.md") == "outside"
    assert skip_reason(folder, away / "secret.md") == "outside"
    assert skip_reason(folder, folder / ".." / "away" / "secret.md") == "outside"


@posix_only
def test_loops_folders_and_files_too_large_are_refused(folder: Path, mode: str) -> None:
    (folder / "a.md").symlink_to("b.md")
    (folder / "b.md").symlink_to("a.md")
    with (folder / "huge.txt").open("wb") as handle:
        handle.truncate(MAX_FILE_BYTES + 1)
    assert skip_reason(folder, folder / "huge.txt") == "too_large"
    assert skip_reason(folder, folder / "sub") == "unreadable"
    with pytest.raises((Skipped, OSError)):  # a loop: ELOOP on the fallback, counted here
        read_inside(str(folder), str(folder / "a.md"))
    with pytest.raises(FileNotFoundError):
        read_inside(str(folder), str(folder / "gone.md"))


def _without_hanging(call: object) -> Iterator[object]:
    """Run `call` on a thread; yield what it raised (a hang fails the test, not the run)."""
    raised: list[object] = []

    def run() -> None:
        try:
            call()  # type: ignore[operator]
        except BaseException as exc:  # reported to the test
            raised.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(60)  # not a timing: a FIFO opened for reading waits for a writer forever
    assert not thread.is_alive(), "reading a FIFO hung"
    yield from raised


@posix_only
def test_a_fifo_or_a_socket_is_refused_without_hanging(folder: Path) -> None:
    os.mkfifo(folder / "pipe.md")
    (raised,) = _without_hanging(lambda: read_inside(str(folder), str(folder / "pipe.md")))
    assert isinstance(raised, Skipped) and raised.reason == "unreadable"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(folder / "sock.md"))
        (raised,) = _without_hanging(lambda: read_inside(str(folder), str(folder / "sock.md")))
        assert isinstance(raised, (Skipped, OSError))


@posix_only
def test_the_indexer_never_reads_through_a_link_swapped_in_after_the_walk(
    folder: Path, tmp_path: Path
) -> None:
    """Between the walk (which saw a regular file) and the read, the file becomes a link out:
    the update reads nothing from outside (the progress callback swaps it, as another local
    process could)."""
    target = folder / "plain.md"

    def swap(progress: object) -> None:
        if getattr(progress, "path", "") == str(target):
            (folder / "tmp-link").symlink_to(folder.parent / "away" / "secret.md")
            os.replace(folder / "tmp-link", target)

    with Library.open(tmp_path / "library.sqlite3") as library:
        report = library.update([str(folder)], progress=swap)
        assert library.search("outside secret") == []
        assert report.skipped["outside"] == 1
