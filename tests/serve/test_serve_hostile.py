"""Hostile requests against the in-process server: text that is not text, lengths that are not
lengths, and requests that could never fit the context are refused with a 400 naming the
field, before the model is asked; nothing of it reaches the log as a traceback."""

from __future__ import annotations

import http.client
import json
import logging
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from serve_helpers import Running, running_server

from gptoss_local.serve.limits import MAX_TOOL_CHARS, MAX_TOOLS, Limits
from gptoss_local.serve.request_body import lone_surrogate

CHAT, RESPONSES = "/v1/chat/completions", "/v1/responses"
LIMITS = Limits(2048)  # the tiny model's context in running_server


@pytest.fixture(scope="module")
def served(tiny_gguf: Path) -> Iterator[Running]:
    with running_server(tiny_gguf) as running:
        yield running


def post(served: Running, path: str, body: bytes) -> tuple[int, dict]:
    connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=30)
    try:
        connection.request("POST", path, body=body, headers={"Content-Type": "application/json"})
        answer = connection.getresponse()
        return answer.status, json.loads(answer.read())
    finally:
        connection.close()


def user(text: str) -> dict:
    return {"role": "user", "content": text}


CALL = {"role": "assistant", "content": None,
        "tool_calls": [{"id": "c1", "type": "function",
                        "function": {"name": "get_weather", "arguments": "ARGS"}}]}  # fmt: skip


@pytest.mark.parametrize(
    ("path", "body", "param"),
    [
        (CHAT, '{"model": "tiny", "messages": [{"role": "user", "content": "a\\ud800"}]}',
         "messages[0].content"),
        (CHAT, '{"model": "tiny", "messages": [{"role": "system", "content": "\\uDFFF"}, '
         '{"role": "user", "content": "hi"}]}', "messages[0].content"),
        (CHAT, json.dumps({"model": "tiny", "messages": [user("hi"), CALL]}).replace(
            '"ARGS"', '{"city": "\\ud800"}'), "messages[1].tool_calls[0].function.arguments.city"),
        (CHAT, json.dumps({"model": "tiny", "messages": [user("hi"), CALL]}).replace(
            "ARGS", '{\\"city\\": \\"\\ud800\\"}'), "messages[1].tool_calls[0].function.arguments"),
        (RESPONSES, '{"model": "tiny", "input": "\\ud800"}', "input"),
        (RESPONSES, '{"model": "tiny", "input": [{"role": "user", "content": '
         '[{"type": "input_text", "text": "x\\udc00y"}]}]}', "input[0].content[0].text"),
    ],
)  # fmt: skip
def test_a_lone_surrogate_is_a_400_naming_its_field(
    served: Running, caplog: pytest.LogCaptureFixture, path: str, body: str, param: str
) -> None:
    with caplog.at_level(logging.INFO, logger="gptoss_local.serve"):
        status, answer = post(served, path, body.encode())
    assert status == 400, answer
    assert answer["error"]["param"] == param and answer["error"]["code"] == "invalid_text"
    assert param in answer["error"]["message"]
    assert not any(record.exc_info for record in caplog.records)


def test_raw_surrogate_bytes_are_refused_and_real_pairs_pass(served: Running) -> None:
    raw = b'{"model": "tiny", "messages": [{"role": "user", "content": "a\xed\xa0\x80"}]}'
    status, answer = post(served, CHAT, raw)
    assert status == 400 and answer["error"]["param"] == "messages[0].content"
    paired = '{"model": "tiny", "messages": [{"role": "user", "content": "hi \\ud83d\\ude00"}]}'
    assert post(served, CHAT, paired.encode())[0] == 200  # an escaped emoji is text
    assert lone_surrogate({"a": [1, {"b\ud800": "x"}]}) == "a key in a[1]"


def raw_exchange(port: int, head: str, body: bytes, timeout: float = 5) -> tuple[int, dict]:
    """Send `head` and `body` as they are and keep the connection open: the reply's status
    and JSON (the server must answer without waiting for the client to close)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(head.replace("\n", "\r\n").encode() + b"\r\n" + body)
        reply = sock.makefile("rb")
        status = int(reply.readline().split()[1])
        length = 0
        while (line := reply.readline().strip()) != b"":
            name, _, value = line.partition(b":")
            if name.lower() == b"content-length":
                length = int(value)
        return status, json.loads(reply.read(length))


@pytest.mark.parametrize(
    "lengths", [["-1"], ["+2"], ["1_0"], [" 0x2"], ["2", "3"], ["99999999999"]]
)
def test_a_content_length_that_is_not_one_plain_number_is_refused_at_once(
    served: Running, lengths: list[str]
) -> None:
    head = f"POST {CHAT} HTTP/1.1\nHost: 127.0.0.1:{served.port}\nContent-Type: application/json\n"
    head += "".join(f"Content-Length: {n}\n" for n in lengths)
    started = time.monotonic()
    status, answer = raw_exchange(served.port, head, b"{}")
    assert (status, answer["error"]["code"]) in (
        (400, "invalid_content_length"),
        (413, "body_too_large"),
    ), answer
    assert time.monotonic() - started < 3


def test_a_chunked_body_is_refused(served: Running) -> None:
    head = (f"POST {CHAT} HTTP/1.1\nHost: 127.0.0.1:{served.port}\n"
            "Content-Type: application/json\nTransfer-Encoding: chunked\n")  # fmt: skip
    assert raw_exchange(served.port, head, b"2\r\n{}\r\n0\r\n\r\n")[0] == 411


def chat(messages: list[dict], **extra: object) -> bytes:
    return json.dumps({"model": "tiny", "messages": messages, **extra}).encode()


def tool(name: str, description: str = "") -> dict:
    return {"type": "function", "function": {"name": name, "description": description}}


@pytest.mark.parametrize(
    ("path", "body", "param", "code"),
    [
        (CHAT, chat([user("x")] * (LIMITS.max_messages + 1)), "messages",
         "context_length_exceeded"),
        (RESPONSES, json.dumps({"model": "tiny", "input": [user("x")] * (LIMITS.max_messages + 1)})
         .encode(), "input", "context_length_exceeded"),
        (CHAT, chat([user("word " * (LIMITS.max_chars // 5 + 1))]), "messages",
         "context_length_exceeded"),
        (CHAT, chat([user("hi")], tools=[tool(f"f{n}") for n in range(MAX_TOOLS + 1)]), "tools",
         "invalid_value"),
        (RESPONSES, json.dumps({"model": "tiny", "input": "hi", "tools": [
            {"type": "function", "name": "f", "description": "d" * MAX_TOOL_CHARS}]}).encode(),
         "tools[0]", "invalid_value"),
        (CHAT, chat([user("hi")], stop="s" * 1000), "stop", "invalid_value"),
    ],
)  # fmt: skip
def test_requests_that_could_never_fit_are_refused_before_the_model_is_asked(
    served: Running, path: str, body: bytes, param: str, code: str
) -> None:
    asked = len(served.seen.conversations)
    started = time.monotonic()
    status, answer = post(served, path, body)
    assert status == 400, answer
    assert (answer["error"]["param"], answer["error"]["code"]) == (param, code)
    assert len(served.seen.conversations) == asked  # refused before the model saw it
    assert time.monotonic() - started < 5
