"""A locked or damaged `library.sqlite3`, as a user meets it through the installed command:
`docs`, `docs reindex` and `tools call browser.search` say what happened and what to do (exit 2,
no traceback): locked, by which process; damaged (4 KB overwritten, or cut short), how to
rebuild it; and `docs reindex --rebuild` sets the damaged file aside and builds the index anew."""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import pytest
from installed_cli import assert_refused, gptoss
from library_helpers import write_corpus

from gptoss_local.library import default_path

SEARCH = ("tools", "call", "browser.search", '{"query": "zebra stripes"}')
COMMANDS = (("docs",), ("docs", "reindex"), SEARCH)

# Another process holding the index: `exclusive` keeps every other connection out (as a
# `sqlite3` shell with locking_mode EXCLUSIVE does); otherwise it holds the write lock, as a
# `docs reindex` does while it writes.
_HOLDER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
if sys.argv[2] == "exclusive":
    conn.execute("PRAGMA locking_mode = EXCLUSIVE")
conn.execute("BEGIN EXCLUSIVE")
conn.execute("UPDATE folders SET files = files")
print("holding", flush=True)
sys.stdin.read()  # until the test closes the pipe
"""


@pytest.fixture
def index(tmp_path: Path) -> Path:
    """An index of 40 files, made by `docs add` as a user makes it."""
    notes = write_corpus(tmp_path / "notes", 40)
    done = gptoss("docs", "add", str(notes))
    assert done.returncode == 0, done.stderr
    path = default_path()
    assert path.stat().st_size > 64 * 1024
    return path


@contextmanager
def held(path: Path, how: str) -> Iterator[subprocess.Popen[str]]:
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(path), how], text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "holding\n"
        yield holder
    finally:
        holder.kill()
        holder.wait(10)


def together(*commands: tuple[str, ...]) -> list[subprocess.CompletedProcess[str]]:
    """Run the commands at once (each waits out SQLite's busy timeout on a lock)."""
    with ThreadPoolExecutor(len(commands)) as pool:
        return list(pool.map(lambda argv: gptoss(*argv), commands))


def test_an_index_locked_by_another_process_names_it(index: Path) -> None:
    with held(index, "exclusive") as holder:
        results = together(*COMMANDS)
    for done in results:
        assert_refused(done, f"the docs index {index} is locked", "Wait until it has finished")
        if sys.platform == "linux":  # /proc/locks tells which process holds the lock
            assert f"process {holder.pid} (python" in done.stderr
    assert "Delete" not in results[0].stderr  # a file in use is never to be deleted


def test_a_reindex_waits_for_the_one_writing_while_docs_still_lists(index: Path) -> None:
    with held(index, "write") as holder:
        listed, reindexed, searched = together(*COMMANDS)
    assert listed.returncode == 0 and "41 files indexed" in listed.stdout, listed.stderr
    for done in (reindexed, searched):
        assert_refused(done, "is locked: another process is writing it")
        if sys.platform == "linux":
            assert f"process {holder.pid}" in done.stderr


def _overwrite_middle(path: Path) -> None:
    with path.open("r+b") as file:
        file.seek(path.stat().st_size // 2)
        file.write(random.Random(36).randbytes(4096))


def _cut_short(path: Path) -> None:
    with path.open("r+b") as file:
        file.truncate(path.stat().st_size // 2)


@pytest.mark.parametrize("damage", [_overwrite_middle, _cut_short], ids=["overwritten", "cut"])
def test_a_damaged_index_says_how_to_rebuild_it_and_the_rebuild_keeps_it(
    index: Path, damage: object
) -> None:
    damage(index)  # type: ignore[operator]
    damaged = index.read_bytes()
    for argv in COMMANDS:
        assert_refused(gptoss(*argv), f"the docs index {index} is damaged",
                       "gptoss-local docs reindex --rebuild")  # fmt: skip
    rebuilt = gptoss("docs", "reindex", "--rebuild")
    assert rebuilt.returncode == 0, rebuilt.stderr
    (aside,) = index.parent.glob("library.sqlite3.damaged-*")
    assert not aside.name.endswith(("-wal", "-shm"))
    assert aside.read_bytes() == damaged  # set aside as it was, not deleted
    assert f"the damaged index is kept as {aside}" in rebuilt.stderr
    assert "41 added, 0 changed, 0 removed" in rebuilt.stderr
    found = gptoss(*SEARCH)
    assert found.returncode == 0, found.stderr
    assert "notes/notes/zebras.md" in found.stdout


def test_a_rebuild_of_a_sound_index_reads_every_file_again(index: Path) -> None:
    done = gptoss("docs", "reindex", "--rebuild")
    assert done.returncode == 0, done.stderr
    assert "41 added, 0 changed, 0 removed, 0 unchanged" in done.stderr
    assert not list(index.parent.glob("library.sqlite3.damaged-*"))
    assert "kept as" not in done.stderr
