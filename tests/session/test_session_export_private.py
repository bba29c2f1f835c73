"""`chats export ID --output FILE` always leaves FILE readable by its owner only, written at once.

The file is written to a temporary file (0600) in the same folder, synced, and renamed over FILE,
so an export over an older, looser file tightens it, and a failure halfway keeps the old file.
"""

from __future__ import annotations

import errno
import os
import stat
import threading
from pathlib import Path

import pytest
from session_helpers import EXPECTED_MD, open_history, small_chat

from gptoss_local.cli import main
from gptoss_local.commands.chats import _write_private

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX file modes")


@pytest.fixture
def chat_id() -> int:
    history, _ = open_history()
    chat = small_chat(history)
    history.close()
    return chat


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_an_export_over_a_readable_file_makes_it_private(
    capsys: pytest.CaptureFixture[str], chat_id: int, tmp_path: Path
) -> None:
    target = tmp_path / "sky.md"
    target.write_text("an older export", encoding="utf-8")
    os.chmod(target, 0o644)
    assert main(["chats", "export", str(chat_id), "--output", str(target)]) == 0
    assert _mode(target) == 0o600
    assert target.read_text(encoding="utf-8") == EXPECTED_MD
    assert [p.name for p in tmp_path.iterdir() if p.name != "gptoss-home"] == ["sky.md"]


def test_the_export_is_a_private_temporary_file_renamed_over_the_target(
    capsys: pytest.CaptureFixture[str],
    chat_id: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    target = tmp_path / "out" / "sky.md"
    target.parent.mkdir()
    target.write_text("old", encoding="utf-8")
    os.chmod(target, 0o666)
    seen: list[tuple[Path, Path, int, str]] = []
    real_replace = os.replace

    def spy(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        source = Path(src)
        seen.append((source, Path(dst), _mode(source), source.read_text(encoding="utf-8")))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    assert main(["chats", "export", str(chat_id), "-o", str(target)]) == 0
    ((source, destination, mode, text),) = seen
    assert source.parent == target.parent and source != target  # same folder: a rename
    assert destination == target and mode == 0o600 and text == EXPECTED_MD
    assert _mode(target) == 0o600 and sorted(target.parent.iterdir()) == [target]


@pytest.mark.parametrize("failing", ["fsync", "replace"])
def test_a_failed_export_keeps_the_old_file_and_leaves_nothing_behind(
    capsys: pytest.CaptureFixture[str],
    chat_id: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    failing: str,
) -> None:
    folder = tmp_path / "exports"
    folder.mkdir()
    target = folder / "sky.md"
    target.write_text("the export of last week", encoding="utf-8")

    def disk_full(*_args: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, failing, disk_full)
    code = main(["chats", "export", str(chat_id), "--output", str(target)])
    err = capsys.readouterr().err
    assert code == 2
    assert f"gptoss-local: error: cannot write {target}" in err and "No space left" in err
    assert "Traceback" not in err
    assert target.read_text(encoding="utf-8") == "the export of last week"
    assert sorted(folder.iterdir()) == [target]  # the temporary file is gone


def test_export_to_a_pipe_or_device_writes_straight_in(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    _write_private(fifo, "hello\n")
    reader.join(10)
    assert got == [b"hello\n"] and stat.S_ISFIFO(fifo.stat().st_mode)
