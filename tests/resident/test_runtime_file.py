"""The runtime file (`serve/runtime_file.py`) and `find_engine`: private, claimed by one
engine at a time, stale ones cleaned, and never trusted when another user's, readable by
others, or pointing at a server that is not the engine it names."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from contextlib import AbstractContextManager
from dataclasses import replace
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from http_helpers import http_stand_in
from resident_helpers import resident_server

from gptoss_local.serve.find_engine import Engine, find_engine
from gptoss_local.serve.runtime_file import (
    EngineFileError,
    EngineRecord,
    claim,
    read_record,
    release,
    runtime_path,
    update,
)

posix_only = pytest.mark.skipif(os.name == "nt", reason="modes and owners are POSIX's")


def dead_pid() -> int:
    """The PID of a process that has ended (and been reaped)."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def record(url: str = "http://127.0.0.1:9/v1", pid: int | None = None) -> EngineRecord:
    return EngineRecord(url, os.getpid() if pid is None else pid, "tiny", "sekrit")


@posix_only
def test_the_claim_writes_a_private_file_that_reads_back() -> None:
    mine = record()
    path = claim(mine)
    assert path == runtime_path()
    assert path.stat().st_mode & 0o777 == 0o600
    assert read_record() == mine
    assert [p.name for p in path.parent.iterdir()] == ["engine.json"]  # no draft left
    release(mine)
    assert not path.exists()


def test_a_second_engine_cannot_claim_it_and_hears_who_holds_it() -> None:
    claim(record())
    with pytest.raises(EngineFileError, match=f"PID {os.getpid()} serves tiny"):
        claim(record())


def test_a_stale_file_gives_way_to_the_next_claim() -> None:
    claim(record(pid=dead_pid()))
    fresh = record()
    claim(fresh)
    assert read_record() == fresh


def test_a_release_leaves_another_engines_file() -> None:
    theirs = record()
    claim(theirs)
    release(record())
    assert read_record() == theirs


@posix_only
def test_a_file_others_may_read_is_refused() -> None:
    claim(record())
    runtime_path().chmod(0o644)
    with pytest.raises(EngineFileError, match="may be read by others"):
        find_engine()


@posix_only
def test_a_file_of_another_user_is_refused() -> None:
    claim(record())
    with pytest.raises(EngineFileError, match="belongs to another user"):
        find_engine(uid=os.getuid() + 1)  # as that user would see our file


class _Plain(BaseHTTPRequestHandler):
    """Another program's server: answers every GET with 200 and a JSON object."""

    def do_GET(self) -> None:
        body = json.dumps({"status": "ok"}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def plain_server() -> AbstractContextManager[int]:
    return http_stand_in(_Plain)


def test_a_stale_file_is_cleaned_by_find_engine() -> None:
    with plain_server() as port:  # its port taken since: the dead PID alone decides
        claim(record(f"http://127.0.0.1:{port}/v1", pid=dead_pid()))
        assert find_engine() is None
    assert not runtime_path().exists()


def test_a_foreign_server_at_the_address_is_refused() -> None:
    with plain_server() as port:
        claim(record(f"http://127.0.0.1:{port}/v1"))
        with pytest.raises(EngineFileError, match="is not the engine"):
            find_engine()


def test_an_address_off_this_machine_is_refused() -> None:
    claim(record("http://192.0.2.1:8080/v1"))
    with pytest.raises(EngineFileError, match="is not the engine"):
        find_engine()


def test_nothing_listening_at_the_address_makes_the_file_stale(tmp_path: Path) -> None:
    with plain_server() as port:
        pass  # closed: nothing listens there now
    claim(record(f"http://127.0.0.1:{port}/v1"))
    assert find_engine() is None
    assert not runtime_path().exists()


def test_our_engine_is_found_with_its_state(
    tiny_gguf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("http_proxy", "HTTP_PROXY"):  # never asked: the engine is on this machine
        monkeypatch.setenv(name, "http://192.0.2.1:9")
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    with resident_server(tiny_gguf, keep_alive=-1) as served:
        claim(EngineRecord(served.server.url, os.getpid(), "tiny", None, "t1"))
        found = find_engine()
        assert found is not None
        assert found.url == served.server.url and "tiny" in found.names
        assert found.state["loaded"] and found.state["loads"] == 1
        claim_of_another_start = EngineRecord(served.server.url, os.getpid(), "tiny", None, "t2")
        runtime_path().unlink()
        claim(claim_of_another_start)  # a recycled port: the server answers another instance
        with pytest.raises(EngineFileError, match="is not the engine"):
            find_engine()


def test_an_engine_that_starts_is_waited_for_then_found(tiny_gguf: Path) -> None:
    with resident_server(tiny_gguf, keep_alive=-1) as served:
        starting = EngineRecord("", os.getpid(), "tiny", None, "t1")
        claim(starting)
        with pytest.raises(EngineFileError, match="an engine is starting on this machine"):
            claim(record())  # a second serve: refused before it loads
        now = find_engine()
        assert now is not None and now.starting
        found: list[object] = []
        waiter = threading.Thread(target=lambda: found.append(find_engine(wait=60)))
        waiter.start()
        update(replace(starting, url=served.server.url))  # it listens now
        waiter.join(60)
        assert len(found) == 1
        engine = found[0]
        assert isinstance(engine, Engine) and not engine.starting
        assert engine.state["instance"] == "t1"


def test_an_update_of_a_file_another_engine_took_is_refused() -> None:
    claim(record())
    with pytest.raises(EngineFileError, match="taken over"):
        update(record())
