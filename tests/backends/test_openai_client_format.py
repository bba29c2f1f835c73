"""What the OpenAI-compatible client asks of a server beyond the conversation (a response
format, a tool choice, penalties, logit biases), seen by a small recording server that answers
every chat with a fixed reply; and `run --schema` / `--tool-choice` through it."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import chat
from installed_cli import Cli

from gptoss_local.backends.base import (
    GenerationSettings,
    ReplyRequest,
    ResponseFormat,
    ToolChoice,
    check_request,
)
from gptoss_local.backends.openai.backend import OpenAIClientBackend
from gptoss_local.backends.openai.messages import chat_body
from gptoss_local.conversation import Conversation, Message, Tool
from gptoss_local.events import AnswerDelta, ReasoningDelta, TurnEnded, merge_events

WEATHER = Tool("get_weather", "The weather in a city.", {"type": "object", "properties": {}})
ANSWER = '{"city": "Oslo"}'


@dataclass
class Recorder:
    """The chat requests a server received, and the answer it streams back."""

    url: str = ""
    bodies: list[dict[str, Any]] = field(default_factory=list)
    answer: str = ANSWER


class _Handler(BaseHTTPRequestHandler):
    recorder: Recorder

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        body = json.dumps({"data": [{"id": "gpt-oss-20b", "context_length": 4096}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.recorder.bodies.append(json.loads(self.rfile.read(length)))
        chunks = [
            {"choices": [{"index": 0, "delta": {"reasoning_content": "Wants JSON"}}]},
            {"choices": [{"index": 0, "delta": {"content": self.recorder.answer}}]},
            {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
            {"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 7}},
        ]
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        for chunk in chunks:
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    found = Recorder()
    handler = type("Handler", (_Handler,), {"recorder": found})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    found.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield found
    finally:
        server.shutdown()
        server.server_close()


def test_a_schema_a_tool_choice_penalties_and_biases_reach_the_server(
    recorder: Recorder,
) -> None:
    backend = OpenAIClientBackend(recorder.url)
    settings = GenerationSettings(frequency_penalty=0.5, presence_penalty=-0.25,
                                  logit_bias=((200012, -100.0), (7, 2.5)))  # fmt: skip
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    asked = ReplyRequest(
        Conversation((Message("user", "weather?"),), tools=(WEATHER,)),
        settings,
        response_format=ResponseFormat(schema, name="place", strict=False),
        tool_choice=ToolChoice(required=True),
    )
    events = merge_events(list(backend.stream(asked)))
    assert events == [ReasoningDelta("Wants JSON"), AnswerDelta(ANSWER), TurnEnded("return")]
    body = recorder.bodies[-1]
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "place", "schema": schema, "strict": False},
    }
    assert body["tool_choice"] == "required"
    assert body["frequency_penalty"] == 0.5 and body["presence_penalty"] == -0.25
    assert body["logit_bias"] == {"200012": -100.0, "7": 2.5}


def test_any_json_and_a_named_tool() -> None:
    asked = ReplyRequest(
        Conversation((Message("user", "weather?"),), tools=(WEATHER,)),
        response_format=ResponseFormat(),
        tool_choice=ToolChoice(name="get_weather"),
    )
    check_request(OpenAIClientBackend.capabilities, asked, "openai")  # all of it passes through
    body = chat_body("m", asked)
    assert body["response_format"] == {"type": "json_object"}
    assert body["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}


def test_nothing_asked_sends_none_of_the_fields() -> None:
    body = chat_body("m", ReplyRequest(chat("hi")))
    for name in ("response_format", "tool_choice", "frequency_penalty", "presence_penalty",
                 "logit_bias"):  # fmt: skip
        assert name not in body


def test_run_schema_and_tool_choice_through_a_server(
    recorder: Recorder, cli: Cli, tmp_path: Path
) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"type": "function", "function": {
        "name": "get_weather", "parameters": {"type": "object", "properties": {}}}}]))  # fmt: skip
    schema = tmp_path / "city.json"
    schema.write_text(json.dumps({"type": "object", "required": ["city"]}))
    code, out, err = cli("run", "--base-url", recorder.url, "--schema", str(schema), "--tools",
                         str(tools), "--tool-choice", "get_weather", "weather?")  # fmt: skip
    assert code == 0, err
    assert json.loads(out) == {"city": "Oslo"}
    body = recorder.bodies[-1]
    assert body["response_format"]["json_schema"]["name"] == "city"
    assert body["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}


def test_run_exits_1_on_an_answer_that_is_not_json(recorder: Recorder, cli: Cli) -> None:
    recorder.answer = "Oslo, I think"
    code, out, err = cli("run", "--base-url", recorder.url, "--schema", '{"type": "object"}', "x")
    assert code == 1 and out == "Oslo, I think\n"
    assert "gptoss-local: error: the answer is not JSON" in err


def test_tool_choice_names_an_offered_tool(recorder: Recorder, cli: Cli) -> None:
    code, _out, err = cli("run", "--base-url", recorder.url, "--tool-choice", "required", "x")
    assert code == 2 and "no function tools are offered" in err
    assert not recorder.bodies  # refused before asking the server
