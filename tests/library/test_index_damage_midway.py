"""Damage that SQLite's check at open cannot see (the full-text index's segments lost, its
tables sound) surfaces in the middle of a search: it is a `LibraryError` saying how to rebuild;
the model is told in English (the chat's tools, `serve --browser`'s client gets its answer, not
a 500); and `docs reindex --rebuild` finds it, sets the file aside and builds the index anew."""

from __future__ import annotations

import http.client
import json
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from engine_helpers import open_tiny
from installed_cli import gptoss
from library_helpers import CITED_ANSWER, write_corpus
from tool_browser_steer import browsing_turns

from gptoss_local import i18n
from gptoss_local.backends.base import GenerationSettings, Reply, ReplyRequest
from gptoss_local.conversation import Conversation
from gptoss_local.library import (
    IndexDamagedError,
    IndexLockedError,
    Library,
    LibraryError,
    default_path,
)
from gptoss_local.library.failures import index_error
from gptoss_local.serve.browsing import BrowsingStreamer
from gptoss_local.serve.guard import Guard
from gptoss_local.serve.server import make_server
from gptoss_local.serve.service import Service
from gptoss_local.tools import ToolRegistry
from gptoss_local.tools.browser import BrowserTool

TOLD = (
    "The index cannot be searched: the index of the user's folders is damaged (database disk "
    "image is malformed). The user can rebuild it with `gptoss-local docs reindex --rebuild`."
)


def lose_segments(path: Path) -> None:
    """Delete most of the FTS5 index's segments, as a crash or a bad disk may leave them."""
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("DELETE FROM chunks_data WHERE id > 10")
    conn.close()


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    return write_corpus(tmp_path / "notes", 20)


@pytest.fixture
def damaged(notes: Path, tmp_path: Path) -> Path:
    path = tmp_path / "index" / "library.sqlite3"
    with Library.open(path) as library:
        library.update([str(notes)])
    lose_segments(path)
    return path


@pytest.fixture
def chinese() -> Iterator[None]:
    i18n.set_language("zh_CN")
    yield
    i18n.set_language("en")


def test_a_search_that_meets_the_damage_says_how_to_rebuild(damaged: Path) -> None:
    with Library.open(damaged) as library:  # its tables are sound: the check at open passes
        assert library.folders()[0].files == 21
        with pytest.raises(IndexDamagedError) as refused:
            library.search("zebra stripes")
    assert str(refused.value).startswith(f"the docs index {damaged} is damaged (")
    assert refused.value.hint is not None and "docs reindex --rebuild" in refused.value.hint


def test_the_chats_browser_tells_the_model_in_english(
    damaged: Path, notes: Path, chinese: None
) -> None:
    registry = ToolRegistry()
    registry.set_browser(BrowserTool(Library.open(damaged), (str(notes),)))
    try:
        output = registry.call("browser.search", {"query": "zebra stripes"})
    finally:
        registry.close()
    assert output.error and output.content == TOLD


def test_serve_browser_answers_its_client_with_a_damaged_index(
    tiny_gguf: Path, damaged: Path, notes: Path
) -> None:
    seen: list[Conversation] = []
    with open_tiny(tiny_gguf, context=8192) as backend, Library.open(damaged) as library:
        steered = browsing_turns(backend)

        def stream(request: ReplyRequest, cancel: threading.Event) -> Reply:
            seen.append(request.conversation)
            return steered.stream(request, cancel)

        browsing = BrowsingStreamer(stream, library, (str(notes),))
        service = Service(backend, ("tiny",), GenerationSettings(), stream=browsing)
        server = make_server(service, Guard("127.0.0.1", 0, None, ()))
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            status, reply = _ask(server.server_address[1], "Why do zebras have stripes?")
        finally:
            server.stop()
            thread.join(10)
    assert status == 200, reply
    assert reply["choices"][0]["message"]["content"] == CITED_ANSWER
    told = [m.content for m in seen[1].messages if m.role == "tool"]
    assert told == [TOLD]


def _ask(port: int, text: str) -> tuple[int, dict]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    body = json.dumps({"model": "tiny", "messages": [{"role": "user", "content": text}]})
    try:
        connection.request("POST", "/v1/chat/completions", body=body,
                           headers={"Content-Type": "application/json"})  # fmt: skip
        answer = connection.getresponse()
        return answer.status, dict(json.loads(answer.read()))
    finally:
        connection.close()


def test_a_rebuild_finds_damage_the_open_check_cannot_and_sets_the_file_aside(
    notes: Path,
) -> None:
    assert gptoss("docs", "add", str(notes)).returncode == 0
    index = default_path()
    lose_segments(index)
    told = gptoss("tools", "call", "browser.search", '{"query": "zebra stripes"}')
    assert told.returncode == 1 and told.stdout.strip() == TOLD, told.stderr
    rebuilt = gptoss("docs", "reindex", "--rebuild")
    assert rebuilt.returncode == 0, rebuilt.stderr
    (aside,) = index.parent.glob("library.sqlite3.damaged-*")
    assert f"the damaged index is kept as {aside}" in rebuilt.stderr
    found = gptoss("tools", "call", "browser.search", '{"query": "zebra stripes"}')
    assert found.returncode == 0 and "notes/notes/zebras.md" in found.stdout, found.stderr


def test_without_error_codes_as_on_python_3_10_the_kind_of_error_tells(tmp_path: Path) -> None:
    path = tmp_path / "library.sqlite3"  # errors made here carry no sqlite_errorcode
    damaged = index_error(sqlite3.DatabaseError("file is not a database"), path)
    locked = index_error(sqlite3.OperationalError("database is locked"), path)
    full = index_error(sqlite3.OperationalError("database or disk is full"), path)
    assert isinstance(damaged, IndexDamagedError) and isinstance(locked, IndexLockedError)
    assert type(full) is LibraryError and full.for_model == "database or disk is full."
    assert str(full).startswith(f"cannot use the docs index {path}: database or disk is full")
