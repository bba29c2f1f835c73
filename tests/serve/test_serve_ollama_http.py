"""Ollama's API at the HTTP level, on the tiny model: `GET /`, the NDJSON stream (one object a
line, the last `done`), a failure inside a stream as a line with `error`, errors as `{"error":
"..."}`, generate, the preload a request without messages is, and what is refused (pull of
another model, delete, embeddings, create)."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from serve_helpers import Running, running_server

HI = [{"role": "user", "content": "hi"}]


@pytest.fixture(scope="module")
def served(tiny_gguf: Path) -> Iterator[Running]:
    with running_server(tiny_gguf) as running:
        yield running


def request(
    served: Running, method: str, path: str, body: Any = None
) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=60)
    try:
        sent = None if body is None else json.dumps(body).encode()
        connection.request(method, path, body=sent, headers={"Content-Type": "application/json"})
        answer = connection.getresponse()
        return answer.status, dict(answer.getheaders()), answer.read()
    finally:
        connection.close()


def error_of(raw: bytes) -> str:
    body = json.loads(raw)
    assert set(body) == {"error"} and isinstance(body["error"], str)
    return str(body["error"])


def test_liveness_is_text_and_health_stays(served: Running) -> None:
    status, headers, raw = request(served, "GET", "/")
    assert (status, raw) == (200, b"Ollama is running")
    assert headers["Content-Type"].startswith("text/plain")
    status, _, raw = request(served, "GET", "/health")
    assert status == 200 and json.loads(raw)["status"] == "ok"
    connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=30)
    try:  # the ollama CLI's check; the connection stays usable after it
        for _ in range(2):
            connection.request("HEAD", "/")
            answer = connection.getresponse()
            assert (answer.status, answer.read()) == (200, b"")
    finally:
        connection.close()


def test_a_chat_streams_one_object_a_line(served: Running) -> None:
    status, headers, raw = request(served, "POST", "/api/chat", {"model": "tiny", "messages": HI})
    assert status == 200 and headers["Content-Type"] == "application/x-ndjson"
    lines = [json.loads(line) for line in raw.decode().splitlines()]
    *parts, last = lines
    assert parts and not any(p["done"] for p in parts)
    assert "".join(p["message"]["content"] for p in parts) == "Hello there"
    assert "".join(p["message"].get("thinking", "") for p in parts) == "The user says hi"
    assert last["done"] and last["done_reason"] == "stop" and last["model"] == "gpt-oss-tiny"
    assert last["eval_count"] > 0 and last["prompt_eval_count"] > 0
    assert last["total_duration"] >= last["eval_duration"] > 0


def test_a_generate_whole_and_limited(served: Running) -> None:
    body = {"model": "tiny", "prompt": "hi", "stream": False}
    status, _, raw = request(served, "POST", "/api/generate", body)
    reply = json.loads(raw)
    assert status == 200 and reply["response"] == "Hello there"
    assert reply["thinking"] == "The user says hi" and reply["done_reason"] == "stop"
    body["options"] = {"num_predict": 2}
    reply = json.loads(request(served, "POST", "/api/generate", body)[2])
    assert reply["done_reason"] == "length" and reply["eval_count"] == 2


def test_a_failure_inside_the_stream_is_a_line_with_error(served: Running) -> None:
    body = {"model": "tiny", "messages": [{"role": "user", "content": "fail"}]}
    status, _, raw = request(served, "POST", "/api/chat", body)
    assert status == 200  # the headers went before the failure
    last = json.loads(raw.decode().splitlines()[-1])
    assert set(last) == {"error"} and "llama_decode failed" in last["error"]


def test_errors_before_the_reply(served: Running) -> None:
    status, _, raw = request(served, "POST", "/api/chat", {"model": "gpt-4o", "messages": HI})
    assert status == 404 and "gpt-4o" in error_of(raw)
    body = {"model": "tiny", "messages": HI, "options": {"mirostat": 2}}
    status, _, raw = request(served, "POST", "/api/chat", body)
    assert status == 400 and "mirostat" in error_of(raw)
    for method in ("GET", "POST"):
        status, _, raw = request(served, method, "/api/nothing", {})
        assert status == 404 and "/api/nothing" in error_of(raw) and "/api/chat" in error_of(raw)


def test_a_request_without_messages_is_a_preload(served: Running) -> None:
    status, _, raw = request(served, "POST", "/api/chat", {"model": "tiny", "messages": []})
    assert status == 200 and json.loads(raw)["done_reason"] == "load"
    status, _, raw = request(served, "POST", "/api/generate", {"model": "tiny", "keep_alive": "x"})
    assert status == 400 and "keep_alive" in error_of(raw)


def test_model_management_is_answered_or_refused(served: Running) -> None:
    asked = len(served.seen.conversations)
    status, _, raw = request(served, "POST", "/api/pull", {"model": "tiny"})
    assert (status, json.loads(raw)) == (200, {"status": "success"})
    status, _, raw = request(served, "POST", "/api/pull", {"model": "llama3"})
    assert status == 400 and "gptoss-local pull" in error_of(raw)
    status, _, raw = request(served, "DELETE", "/api/delete", {"model": "tiny"})
    assert status == 403 and "gptoss-local rm" in error_of(raw)
    for path in ("/api/embed", "/api/embeddings", "/api/create", "/api/copy", "/api/push"):
        status, _, raw = request(served, "POST", path, {"model": "tiny"})
        assert status == 501 and error_of(raw)
    assert len(served.seen.conversations) == asked  # none of it reached the model


def test_with_a_key_liveness_stays_open(tiny_gguf: Path) -> None:
    with running_server(tiny_gguf, api_key="s3cret") as served:
        assert request(served, "GET", "/")[0] == 200
        status, _, raw = request(served, "GET", "/api/tags")
        assert status == 401 and "API key" in error_of(raw)
