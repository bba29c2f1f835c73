"""`serve --browser`: the server answers the model's browser calls itself over the operator's
folders and the client gets one reply, the steered tiny model searching, opening and
answering with a citation; without `--browser` the browser is never offered."""

from __future__ import annotations

import http.client
import json
import threading
from pathlib import Path

import pytest
from engine_helpers import open_tiny
from installed_cli import assert_refused, gptoss
from library_helpers import CITED_ANSWER, write_corpus
from tool_browser_steer import browsing_turns

from gptoss_local.backends.base import GenerationSettings, Reply, ReplyRequest
from gptoss_local.conversation import Conversation
from gptoss_local.library import Library
from gptoss_local.serve.browsing import BrowsingStreamer
from gptoss_local.serve.guard import Guard
from gptoss_local.serve.server import ApiServer, make_server
from gptoss_local.serve.service import Service


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    return write_corpus(tmp_path / "notes", 20)


def _serve(service: Service) -> tuple[ApiServer, threading.Thread]:
    server = make_server(service, Guard("127.0.0.1", 0, None, ()))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server, thread


def _ask(server: ApiServer, text: str) -> dict:
    connection = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=120)
    body = json.dumps({"model": "tiny", "messages": [{"role": "user", "content": text}]})
    try:
        connection.request("POST", "/v1/chat/completions", body=body,
                           headers={"Content-Type": "application/json"})  # fmt: skip
        answer = connection.getresponse()
        assert answer.status == 200
        return dict(json.loads(answer.read()))
    finally:
        connection.close()


def test_the_server_browses_and_the_client_gets_the_answer(
    tiny_gguf: Path, notes: Path, tmp_path: Path
) -> None:
    seen: list[Conversation] = []
    with open_tiny(tiny_gguf, context=8192) as backend, Library.open(tmp_path / "l.db") as library:
        library.update([str(notes)])
        steered = browsing_turns(backend)

        def stream(request: ReplyRequest, cancel: threading.Event) -> Reply:
            seen.append(request.conversation)
            return steered.stream(request, cancel)

        browsing = BrowsingStreamer(stream, library, (str(notes),))
        server, thread = _serve(Service(backend, ("tiny",), GenerationSettings(), stream=browsing))
        try:
            reply = _ask(server, "Why do zebras have stripes?")
        finally:
            server.stop()
            thread.join(10)
    (choice,) = reply["choices"]
    message = choice["message"]
    assert message["content"] == CITED_ANSWER and choice["finish_reason"] == "stop"
    assert not message.get("tool_calls")  # the browser's calls stayed in the server
    assert "Let me search" in message["reasoning_content"]
    assert "Found it" in message["reasoning_content"]
    assert len(seen) == 3 and all(c.builtin_tools[0].name == "browser" for c in seen)
    tool_results = [m.content for m in seen[2].messages if m.role == "tool"]
    assert (
        tool_results[0].startswith("[0] zebra stripes")
        and "(notes/notes/zebras.md)" in (tool_results[1])
    )
    assert reply["usage"]["completion_tokens"] > 0


def test_without_browser_the_server_offers_none(tiny_gguf: Path) -> None:
    seen: list[Conversation] = []
    with open_tiny(tiny_gguf) as backend:

        def stream(request: ReplyRequest, cancel: threading.Event) -> Reply:
            seen.append(request.conversation)
            return backend.stream(request, cancel)

        settings = GenerationSettings(max_tokens=4)
        server, thread = _serve(Service(backend, ("tiny",), settings, stream=stream))
        try:
            _ask(server, "hi")
        finally:
            server.stop()
            thread.join(10)
    assert seen and seen[0].builtin_tools == ()


def test_serve_browser_needs_folders_and_says_so_before_loading(tmp_path: Path) -> None:
    done = gptoss("serve", "--browser", "--model-path", str(tmp_path / "none.gguf"))
    assert_refused(done, "--browser: the browser has no folders to search", "docs add")
