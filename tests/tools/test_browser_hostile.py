"""The browser's `open` against a hostile folder and hostile documents (issue 36): another local
process swapping a file for a link out of the folder while the model opens it never gets the
outside file's text to the model; a large or odd document is converted once, into bounded
pages, and opening it again neither reads nor converts it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from gptoss_local.library import Library
from gptoss_local.library.file_lines import TEXTWRAP_CHARS, WIDTH, FileLines, FileOrigins, wrap
from gptoss_local.library.pages import MAX_VIEW_LINES, Page, cited, find_page, view
from gptoss_local.tools.browser import BrowserTool

SECRET = "OUTSIDE-SECRET-7c1f"
# Another process, as in the issue: flips notes/flip.md between a regular file and a link to
# the secret (os.replace both ways) until told to stop, at most FLIPS times.
FLIPPER = r"""
import os, sys
folder, secret, stop = sys.argv[1], sys.argv[2], sys.argv[3]
flip, link, plain = (os.path.join(folder, n) for n in ("flip.md", "flip.link", "flip.plain"))
for n in range(400_000):
    if n % 64 == 0 and os.path.exists(stop):
        break
    os.symlink(secret, link)
    os.replace(link, flip)
    with open(plain, "w") as f:
        f.write("inside text about flips\n")
    os.replace(plain, flip)
"""
CALLS = 3000  # each way (by path, by result link); the old code leaked in ~0.3% of calls


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "flip.md").write_text("inside text about flips\n")
    (tmp_path / "secret.md").write_text(f"{SECRET}\n")
    return notes


@pytest.fixture
def browser(folder: Path, tmp_path: Path) -> Iterator[BrowserTool]:
    library = Library.open(tmp_path / "library.sqlite3")
    library.update([str(folder)])
    tool = BrowserTool(library, (str(folder),))
    yield tool
    tool.close()


@pytest.mark.skipif(sys.platform == "win32", reason="symbolic links need privileges there")
def test_open_never_follows_a_link_swapped_in_by_another_process(
    browser: BrowserTool, folder: Path, tmp_path: Path
) -> None:
    assert not browser.call("search", {"query": "flips"}).error  # cursor 0: the result
    stop = tmp_path / "stop"
    flipper = subprocess.Popen(
        [sys.executable, "-c", FLIPPER, str(folder), str(tmp_path / "secret.md"), str(stop)]
    )
    leaked, inside = [], 0
    try:
        while not (folder / "flip.link").exists() and flipper.poll() is None:
            time.sleep(0.01)  # the flipper has started
        for _ in range(CALLS):
            for arguments in ({"id": "notes/flip.md"}, {"id": 0, "cursor": 0}):
                out = browser.call("open", arguments)
                inside += "inside text" in out.content
                if SECRET in out.content:
                    leaked.append(out.content)
            if flipper.poll() is not None:
                break
    finally:
        stop.touch()
        flipper.wait(60)
    assert flipper.returncode == 0
    assert leaked == []
    assert inside > 0  # the file was opened, not refused every time


def test_an_unchanged_file_is_read_and_converted_once(browser: BrowserTool, folder: Path) -> None:
    browser.call("search", {"query": "flips"})
    first = browser.call("open", {"id": 0, "cursor": 0}).content
    for arguments in (
        {"id": 0, "cursor": 0},
        {"id": "notes/flip.md"},
        {"id": str(folder / "flip.md")},
    ):
        assert browser.call("open", arguments).content.split("\n", 1)[1] == first.split("\n", 1)[1]
    assert browser.pages.made == 1
    (folder / "flip.md").write_text("changed text about flips, longer now\n")
    assert "changed text" in browser.call("open", {"id": "notes/flip.md"}).content
    assert browser.pages.made == 2


def heap_peak(call: object) -> int:
    """The Python heap's peak over `call()`, in bytes."""
    tracemalloc.start()
    try:
        call()  # type: ignore[operator]
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


MIB = 1024 * 1024
HOSTILE = {  # the documents: name, bytes, the heap an open may use at most
    "lines.txt": (b"x\n" * 4_000_000, 160 * MIB),
    "one-line.txt": ((b"lorem ipsum dolor sit amet " * 400_000)[: 10 * MIB], 100 * MIB),
    "entities.html": (b"<p>" + b"&amp;" * 1_000_000 + b"</p>\n", 100 * MIB),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_document_opens_into_bounded_pages_in_bounded_memory(
    browser: BrowserTool, folder: Path, name: str
) -> None:
    data, bound = HOSTILE[name]
    (folder / name).write_bytes(data)
    shown: list[str] = []
    peak = heap_peak(lambda: shown.append(browser.call("open", {"id": f"notes/{name}"}).content))
    head, _counts, _blank, *lines = shown[0].split("\n")
    assert head == f"[0] {name} (notes/{name})" and lines
    assert all(len(line.split(": ", 1)[1]) <= WIDTH for line in lines)
    assert len(shown[0]) < 6000  # one window of about 1,024 tokens
    assert peak < bound, f"{peak / MIB:.0f} MiB"
    again = browser.call("open", {"id": f"notes/{name}", "loc": 1000, "num_lines": 2}).content
    assert again.split("\n")[3].startswith("L1000: ") and browser.pages.made == 1


def test_pages_wrap_as_textwrap_does() -> None:
    """The compact pages keep the trained format: every line wrapped as textwrap wraps it
    (hyphens, tabs, runs of spaces and words longer than a line included)."""
    import random

    rng = random.Random(36)
    alphabet = ["a", "bc", " ", "   ", "\t", "x" * 90, " " * 85, "é", "\r", "-", "--", "a-b"]
    lines = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 50))) for _ in range(1500)]
    assert sum(len(line) for line in lines if "-" in line) < TEXTWRAP_CHARS
    for line in lines:
        expected = textwrap.wrap(line, width=WIDTH, replace_whitespace=False,
                                 drop_whitespace=False) or [""]  # fmt: skip
        assert wrap(line) == expected, repr(line)
        if "-" not in line:
            assert wrap(line, exact=False) == expected, repr(line)
    page = FileLines.of("\n".join(lines) + "\n")
    assert list(page) == [piece for line in lines for piece in wrap(line)]
    # Past TEXTWRAP_CHARS of hyphenated lines, hyphens are no longer break points.
    many = FileLines.of("\n".join(lines * 3))
    assert len(many) < 3 * len(page) and max(map(len, many)) == WIDTH


def test_a_long_line_is_cut_in_linear_time_into_full_lines() -> None:
    """A word of a million characters (the entities' text) is 12,500 lines of 80, made
    without textwrap's quadratic cutting."""
    page = FileLines.of("&" * 1_000_000 + "\n")
    assert len(page) == 12_500 and {len(line) for line in page} == {WIDTH}


def test_find_and_citations_on_a_compact_page_answer_as_on_lines() -> None:
    text = "".join(
        f"Line {n} of the {'Zebra' if n % 7 == 0 else 'okapi'} notes\n" for n in range(500)
    )
    lines = FileLines.of(text)
    compact = Page("file", "t", "notes/t.md", lines, FileOrigins("/n/t.md", "notes/t.md", lines))
    listed = Page("file", "t", "notes/t.md", list(lines), list(compact.origins))
    for pattern in ("zebra", "OKAPI notes", "Line 49", "absent", "\n"):
        assert view(find_page(compact, pattern), 1, 0) == view(find_page(listed, pattern), 1, 0)
    assert cited(compact, 3, 10**9) == cited(listed, 3, 10**9)
    assert cited(compact, 10**9, 10**9) is None


def test_a_view_shows_at_most_max_view_lines_whatever_num_lines_asks() -> None:
    lines = FileLines.of("short line\n" * 50_000)
    page = Page("file", "t", "notes/t.md", lines, FileOrigins("/n/t.md", "notes/t.md", lines))
    shown = view(page, 0, 10, num_lines=10**9).split("\n")
    assert shown[1] == f"**viewing lines [10 - {10 + MAX_VIEW_LINES - 1}] of 49999**"
    assert len(shown) == 3 + MAX_VIEW_LINES
