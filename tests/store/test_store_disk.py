"""A full disk: refused before starting, and stopped at once mid-way with the partial kept."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from http_fixture import FileServer
from store_files import Served, pull_recorded

from gptoss_local.store import sink
from gptoss_local.store.errors import DiskFullError, StoreError
from gptoss_local.store.layout import file_paths
from gptoss_local.store.pull import PullResult

ONE = "tiny-one.gguf"


def pull(**changes: object) -> PullResult:
    return pull_recorded(**changes)[0]


def test_an_injected_enospc_stops_at_once_and_keeps_the_partial(
    http_server: FileServer, served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    written = 0

    def full_after_1mib(fd: int, data: memoryview) -> int:
        nonlocal written
        room = (1 << 20) - written
        if room <= 0:
            raise OSError(errno.ENOSPC, "No space left on device")
        written += os.write(fd, data[:room])  # a short write, then ENOSPC: what a disk does
        return min(len(data), room)

    monkeypatch.setattr(sink, "_os_write", full_after_1mib)
    with pytest.raises(DiskFullError, match="the disk is full") as failed:
        pull()
    part = file_paths(ONE).part
    assert part.stat().st_size == 1 << 20 and f"kept in {part}" in str(failed.value)
    assert len(http_server.hits) == 1  # no retry, no other source
    assert not file_paths(ONE).lock.exists()
    monkeypatch.setattr(sink, "_os_write", os.write)  # room again: it resumes
    assert pull().path.read_bytes() == served.files[ONE]
    assert http_server.hits[-1].start == 1 << 20


def test_a_small_filesystem_is_refused_before_starting(
    http_server: FileServer, served: Served, tiny_fs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPTOSS_LOCAL_HOME", str(tiny_fs))
    with pytest.raises(DiskFullError, match=r"needs 3\.0 MiB more .* has 2\.0 MiB free"):
        pull()
    assert not http_server.hits


def test_a_filesystem_that_fills_up_mid_way_stops_with_the_partial_kept(
    http_server: FileServer, served: Served, tiny_fs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPTOSS_LOCAL_HOME", str(tiny_fs))
    monkeypatch.setattr("gptoss_local.store.pull.free_bytes", lambda _: 1 << 40)  # it lied
    with pytest.raises(DiskFullError, match="the disk is full"):
        pull()
    part = file_paths(ONE).part
    assert 1 << 20 < part.stat().st_size < len(served.files[ONE])
    assert len(http_server.hits) == 1


def test_an_unwritable_models_folder_is_a_clear_error(
    served: Served, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    home = tmp_path / "home-is-a-file"
    home.write_text("not a folder")
    monkeypatch.setenv("GPTOSS_LOCAL_HOME", str(home))
    with pytest.raises(StoreError, match=r"cannot write .*home-is-a-file"):
        pull()
