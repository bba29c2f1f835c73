"""Resuming after the pull process was killed, damaged partials, and two pulls of one file."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest
from http_fixture import Fault, FileServer
from store_files import Served, models_dir, options, pull_recorded

from gptoss_local import catalog
from gptoss_local.store.errors import LockedError, StoreError
from gptoss_local.store.layout import file_paths
from gptoss_local.store.pull import PullResult, pull_model

ONE = "tiny-one.gguf"


def wait_for(condition, timeout: float = 20.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.01)


def test_a_killed_pull_resumes_and_fetches_only_the_rest(
    http_server: FileServer, served: Served
) -> None:
    size = len(served.files[ONE])
    http_server.fault("main", ONE, Fault("throttle", rate=2 << 20))
    part = file_paths(ONE).part
    command = [sys.executable, "-m", "gptoss_local", "pull", "tiny-one", "--quiet"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        wait_for(lambda: part.exists() and part.stat().st_size >= size * 0.3)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    have = part.stat().st_size
    assert 0 < have < size and file_paths(ONE).lock.exists()  # a stale lock stays behind
    result, notices, reports = pull_recorded()
    assert result.path.read_bytes() == served.files[ONE]
    assert http_server.hits[-1].start == have and http_server.hits[-1].status == 206
    assert http_server.hits[-1].sent == size - have  # resumed, not restarted
    assert any("checking the" in n for n in notices)
    checks = [r for r in reports if r.phase == "check"]
    assert checks[-1].done == checks[-1].total == have
    assert not file_paths(ONE).lock.exists()


def test_a_damaged_partial_is_caught_by_the_hash_and_downloaded_again(
    http_server: FileServer, served: Served
) -> None:
    data = served.files[ONE]
    models_dir().mkdir(parents=True)
    file_paths(ONE).part.write_bytes(data[:1000] + b"\x00" * 1000 + data[2000 : 1 << 20])
    result, notices, _ = pull_recorded()
    assert result.path.read_bytes() == data
    assert any("an earlier, interrupted download and main" in n for n in notices)
    assert http_server.hits[-1].path.startswith("/mirror/") and http_server.hits[-1].start == 0


def test_a_partial_longer_than_the_file_starts_over(
    http_server: FileServer, served: Served
) -> None:
    models_dir().mkdir(parents=True)
    file_paths(ONE).part.write_bytes(bytes(len(served.files[ONE]) + 10))
    result, notices, _ = pull_recorded()
    assert result.path.read_bytes() == served.files[ONE]
    assert any("longer than the file" in n for n in notices)


def test_a_complete_partial_is_verified_without_a_request(
    http_server: FileServer, served: Served
) -> None:
    models_dir().mkdir(parents=True)
    file_paths(ONE).part.write_bytes(served.files[ONE])
    result, _, _ = pull_recorded()
    assert result.path.read_bytes() == served.files[ONE] and not http_server.hits


def test_two_pulls_at_once_download_the_file_once(http_server: FileServer, served: Served) -> None:
    http_server.fault("main", ONE, Fault("throttle", rate=8 << 20))
    results: dict[str, PullResult] = {}
    waits: list[str] = []

    def run(name: str) -> None:
        cat = catalog.load()
        opts = options(lock_timeout=None)
        results[name] = pull_model(cat.model("tiny-one"), cat, opts, notice=waits.append)

    first = threading.Thread(target=run, args=("first",))
    first.start()
    wait_for(lambda: file_paths(ONE).lock.exists())
    second = threading.Thread(target=run, args=("second",))
    second.start()
    first.join(30)
    second.join(30)
    assert results["first"].files[0].how == "downloaded"
    assert results["second"].files[0].how == "present"
    assert http_server.sent[ONE] == len(served.files[ONE])
    assert any("is already pulling tiny-one.gguf; waiting" in w for w in waits)


def test_a_lock_held_by_a_live_process_is_refused_with_its_pid(served: Served) -> None:
    models_dir().mkdir(parents=True)
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"]) as other:
        lock = file_paths(ONE).lock
        lock.write_text(json.dumps({"pid": other.pid, "host": socket.gethostname()}))
        try:
            with pytest.raises(LockedError, match=f"being written by process {other.pid}"):
                pull_recorded()
        finally:
            other.kill()
    assert lock.exists()  # not ours to remove


@pytest.mark.parametrize("content", ["dead", "reused", "garbage"])
def test_a_stale_lock_is_taken_over(http_server: FileServer, served: Served, content: str) -> None:
    models_dir().mkdir(parents=True)
    lock = file_paths(ONE).lock
    if content == "garbage":
        lock.write_text("{not json")
        os.utime(lock, (time.time() - 60, time.time() - 60))
    else:  # a PID that has exited, or ours with another start time (the PID was reused)
        pid = os.getpid() if content == "reused" else _dead_pid()
        lock.write_text(json.dumps({"pid": pid, "started": 1.0, "host": socket.gethostname()}))
    result, _, _ = pull_recorded()
    assert result.path.read_bytes() == served.files[ONE] and not lock.exists()


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.mark.parametrize("disguised", [False, True])
def test_a_web_page_answering_a_resume_keeps_the_partial(
    http_server: FileServer, served: Served, disguised: bool
) -> None:
    data = served.files[ONE]
    models_dir().mkdir(parents=True)
    file_paths(ONE).part.write_bytes(data[: 1 << 20])
    if disguised:  # a captive portal's page, the file's length, sent as octet-stream
        page = b"<!DOCTYPE html><html>Please log in</html>"
        http_server.files[ONE] = page + bytes(len(data) - len(page))
        http_server.fault("main", ONE, Fault("ignore_range", times=-1))
    else:
        http_server.fault("main", ONE, Fault("html", times=-1))
    with pytest.raises(StoreError, match="served a web page"):
        pull_recorded(source="main")
    assert file_paths(ONE).part.read_bytes() == data[: 1 << 20]
