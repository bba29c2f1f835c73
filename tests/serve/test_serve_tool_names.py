"""Tool names that are no identifiers, in every dialect `serve` speaks, on the tiny model over
loopback: Claude Code's MCP tools (``mcp__my-server__get_weather``), an MCP server's dotted
name (``fs.read``). The request is accepted, the prompt declares each by a safe name (the
identifier a name already is stays, and the hyphenated twin of one gets ``_2``), the model's
call comes back by the client's exact name, and the call and its result sent back in the
history are read (by the safe name again). Names the API itself refuses are a 400 in the
dialect's own shape.

The model is steered to call the first tool offered (serve_helpers.Steering) with
{"city": "Tokyo"}.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from serve_helpers import Running, running_server

from gptoss_local.backends.base import GenerationSettings
from gptoss_local.harmony import render_prompt
from gptoss_local.serve.anthropic.request import MessagesReader
from gptoss_local.serve.api_request import RequestReader
from gptoss_local.serve.chat_request import ChatReader
from gptoss_local.serve.errors import ApiError
from gptoss_local.serve.responses_reply import ResponsesReply
from gptoss_local.serve.responses_request import ResponsesReader

QUESTION = "What is the weather in Tokyo?"
CALLED = "mcp__my-server__get_weather"  # the first tool: the one the model calls
NAMES = [CALLED, "mcp__my_server__get_weather", "fs.read"]
SAFE = ["mcp__my_server__get_weather_2", "mcp__my_server__get_weather", "fs_read"]
PARAMETERS = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
OUTPUT = "sunny in Tokyo"
Piece = dict[str, Any]


@pytest.fixture(scope="module")
def served(tiny_gguf: Path) -> Iterator[Running]:
    with running_server(tiny_gguf) as running:
        yield running


def post(served: Running, path: str, body: Piece) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=120)
    try:
        headers = {"Content-Type": "application/json", "anthropic-version": "2023-06-01"}
        connection.request("POST", path, body=json.dumps(body).encode(), headers=headers)
        answer = connection.getresponse()
        return answer.status, answer.read()
    finally:
        connection.close()


def sse(raw: bytes) -> list[Piece]:
    """The JSON objects of a server-sent event stream."""
    lines = raw.decode().splitlines()
    found = [line.removeprefix("data: ") for line in lines if line.startswith("data: ")]
    return [json.loads(data) for data in found if data != "[DONE]"]


def ndjson(raw: bytes) -> list[Piece]:
    return [json.loads(line) for line in raw.decode().splitlines() if line]


@dataclass(frozen=True)
class Call:
    """A call as the client got it: the id it answers by, the tool's name, the arguments."""

    id: str
    name: str
    arguments: Piece


# Chat Completions


def function(name: str) -> Piece:
    return {"name": name, "description": "The weather.", "parameters": PARAMETERS}


def chat_body(names: list[str], history: list[Piece], stream: bool) -> Piece:
    tools = [{"type": "function", "function": function(n)} for n in names]
    return {"model": "gpt-oss-tiny", "messages": [{"role": "user", "content": QUESTION},
            *history], "tools": tools, "stream": stream}  # fmt: skip


def chat_calls(raw: bytes, stream: bool) -> list[Call]:
    if stream:
        found = [c for p in sse(raw) if p["choices"] for c in
                 p["choices"][0]["delta"].get("tool_calls") or ()]  # fmt: skip
    else:
        found = json.loads(raw)["choices"][0]["message"].get("tool_calls") or []
    return [Call(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
            for c in found]  # fmt: skip


def chat_history(call: Call) -> list[Piece]:
    function = {"name": call.name, "arguments": json.dumps(call.arguments)}
    return [{"role": "assistant", "content": None,
             "tool_calls": [{"id": call.id, "type": "function", "function": function}]},
            {"role": "tool", "tool_call_id": call.id, "content": OUTPUT}]  # fmt: skip


# Responses


def responses_body(names: list[str], history: list[Piece], stream: bool) -> Piece:
    tools = [{"type": "function", **function(n)} for n in names]
    return {"model": "gpt-oss-tiny", "input": [{"role": "user", "content": QUESTION}, *history],
            "tools": tools, "stream": stream}  # fmt: skip


def responses_calls(raw: bytes, stream: bool) -> list[Call]:
    if stream:
        (done,) = [p for p in sse(raw) if p["type"] == "response.completed"]
        output = done["response"]["output"]
    else:
        output = json.loads(raw)["output"]
    return [Call(i["call_id"], i["name"], json.loads(i["arguments"]))
            for i in output if i["type"] == "function_call"]  # fmt: skip


def responses_history(call: Call) -> list[Piece]:
    return [{"type": "function_call", "call_id": call.id, "name": call.name,
             "arguments": json.dumps(call.arguments)},
            {"type": "function_call_output", "call_id": call.id, "output": OUTPUT}]  # fmt: skip


# Anthropic's Messages


def messages_body(names: list[str], history: list[Piece], stream: bool) -> Piece:
    tools = [{"name": n, "description": "The weather.", "input_schema": PARAMETERS}
             for n in names]  # fmt: skip
    return {"model": "gpt-oss-tiny", "max_tokens": 300, "stream": stream, "tools": tools,
            "messages": [{"role": "user", "content": QUESTION}, *history]}  # fmt: skip


def messages_calls(raw: bytes, stream: bool) -> list[Call]:
    if not stream:
        blocks = json.loads(raw)["content"]
        return [Call(b["id"], b["name"], b["input"]) for b in blocks if b["type"] == "tool_use"]
    calls, pieces = [], sse(raw)
    for at, piece in enumerate(pieces):
        block = piece.get("content_block") or {}
        if piece["type"] == "content_block_start" and block["type"] == "tool_use":
            delta = pieces[at + 1]["delta"]
            calls.append(Call(block["id"], block["name"], json.loads(delta["partial_json"])))
    return calls


def messages_history(call: Call) -> list[Piece]:
    use = {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}
    result = {"type": "tool_result", "tool_use_id": call.id, "content": OUTPUT}
    return [{"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]


# Ollama's /api/chat


def ollama_body(names: list[str], history: list[Piece], stream: bool) -> Piece:
    return {**chat_body(names, history, stream), "stream": stream}


def ollama_calls(raw: bytes, stream: bool) -> list[Call]:
    lines = ndjson(raw) if stream else [json.loads(raw)]
    found = [c for line in lines for c in line["message"].get("tool_calls") or ()]
    return [Call("", c["function"]["name"], c["function"]["arguments"]) for c in found]


def ollama_history(call: Call) -> list[Piece]:
    function = {"name": call.name, "arguments": call.arguments}
    return [{"role": "assistant", "content": "", "tool_calls": [{"function": function}]},
            {"role": "tool", "tool_name": call.name, "content": OUTPUT}]  # fmt: skip


@dataclass(frozen=True)
class Dialect:
    path: str
    body: Callable[[list[str], list[Piece], bool], Piece]
    calls: Callable[[bytes, bool], list[Call]]
    history: Callable[[Call], list[Piece]]
    error: Callable[[bytes], str]  # the message of a 400, read as the dialect spells it


def openai_error(raw: bytes) -> str:
    error = json.loads(raw)["error"]
    assert error["type"] == "invalid_request_error"
    return str(error["message"])


def anthropic_error(raw: bytes) -> str:
    body = json.loads(raw)
    assert body["type"] == "error" and body["error"]["type"] == "invalid_request_error"
    return str(body["error"]["message"])


def ollama_error(raw: bytes) -> str:
    body = json.loads(raw)
    assert set(body) == {"error"}
    return str(body["error"])


DIALECTS = {
    "chat": Dialect("/v1/chat/completions", chat_body, chat_calls, chat_history, openai_error),
    "responses": Dialect(
        "/v1/responses", responses_body, responses_calls, responses_history, openai_error
    ),
    "messages": Dialect(
        "/v1/messages", messages_body, messages_calls, messages_history, anthropic_error
    ),
    "ollama": Dialect("/api/chat", ollama_body, ollama_calls, ollama_history, ollama_error),
}


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("dialect", list(DIALECTS))
def test_a_tool_name_no_identifier_goes_to_the_model_safe_and_back_as_given(
    served: Running, dialect: str, stream: bool
) -> None:
    api = DIALECTS[dialect]
    status, raw = post(served, api.path, api.body(NAMES, [], stream))
    assert status == 200, raw
    seen = served.seen.conversations[-1]
    assert [t.name for t in seen.tools] == SAFE
    prompt = render_prompt(list(seen.messages), tools=list(seen.tools))
    for safe in SAFE:
        assert f"type {safe} = " in prompt
    assert "my-server" not in prompt and "fs.read" not in prompt
    (call,) = api.calls(raw, stream)
    assert (call.name, call.arguments) == (CALLED, {"city": "Tokyo"})

    status, raw = post(served, api.path, api.body(NAMES, api.history(call), stream))
    assert status == 200, raw
    assert api.calls(raw, stream) == []  # an answer, with the result in view
    _, sent, result = served.seen.conversations[-1].messages
    assert [c.name for c in sent.tool_calls] == [SAFE[0]]
    assert (result.role, result.tool_name, result.content) == ("tool", SAFE[0], OUTPUT)


@pytest.mark.parametrize("dialect", list(DIALECTS))
def test_a_call_in_the_history_to_a_tool_no_longer_offered_keeps_its_own_safe_name(
    served: Running, dialect: str
) -> None:
    """The history names a tool the request no longer offers, whose safe name is another
    offered tool's: it gets a name of its own, so the model never takes one for the other."""
    api = DIALECTS[dialect]
    earlier = Call("call_1", "fs-read", {"city": "Tokyo"})
    status, raw = post(served, api.path, api.body(["fs_read"], api.history(earlier), False))
    assert status == 200, raw
    seen = served.seen.conversations[-1]
    assert [t.name for t in seen.tools] == ["fs_read"]
    _, sent, result = seen.messages
    assert [c.name for c in sent.tool_calls] == [result.tool_name] == ["fs_read_2"]


REFUSED = {  # a name each API refuses, and the words of the refusal
    "chat": ("get weather", "letters, digits"),
    "responses": ("get weather", "letters, digits"),
    "messages": ("a/b", "letters, digits"),
    "ollama": ("", 'needs a "name"'),
}


@pytest.mark.parametrize("dialect", list(DIALECTS))
def test_a_name_the_api_refuses_is_a_400_in_its_own_shape(served: Running, dialect: str) -> None:
    api = DIALECTS[dialect]
    name, words = REFUSED[dialect]
    status, raw = post(served, api.path, api.body([name], [], False))
    assert status == 400
    assert words in api.error(raw)


@pytest.mark.parametrize("dialect", ["chat", "responses", "messages"])
def test_a_long_name_is_served(served: Running, dialect: str) -> None:
    longest = 200  # past OpenAI's 64 and Anthropic's 128: a local server takes it
    name = "a-" * (longest // 2)
    api = DIALECTS[dialect]
    status, raw = post(served, api.path, api.body([name], [], False))
    assert status == 200, raw
    assert [c.name for c in api.calls(raw, False)] == [name]
    assert [t.name for t in served.seen.conversations[-1].tools] == ["a_" * (longest // 2)]


WEATHER = {"type": "function", "function": function("get-weather")}
FLAT = {"type": "function", **function("get-weather")}


@pytest.mark.parametrize(
    ("reader", "tools", "choice"),
    [
        (ChatReader(), [WEATHER], {"type": "function", "function": {"name": "get-weather"}}),
        (ResponsesReader(), [FLAT], {"type": "function", "name": "get-weather"}),
        (ResponsesReader(), [FLAT], {"type": "allowed_tools", "mode": "required",
                                     "tools": [{"type": "function", "name": "get-weather"}]}),
        (MessagesReader(), [messages_body(["get-weather"], [], False)["tools"][0]],
         {"type": "tool", "name": "get-weather"}),
    ],
    ids=["chat", "responses", "allowed_tools", "messages"],
)  # fmt: skip
def test_a_tool_choice_names_the_tool_as_the_client_does(
    reader: RequestReader, tools: list[Piece], choice: Piece
) -> None:
    body = {"model": "gpt-oss-20b", "max_tokens": 10, "tools": tools, "tool_choice": choice,
            ("input" if isinstance(reader, ResponsesReader) else "messages"):
            [{"role": "user", "content": "hi"}]}  # fmt: skip
    request = reader.read(body, ("gpt-oss-20b",), GenerationSettings()).request
    assert [t.name for t in request.conversation.tools] == ["get_weather"]
    assert request.tool_choice.forced and request.tool_choice.name in (None, "get_weather")


def test_a_tool_choice_of_a_tool_not_offered_lists_the_tools_by_the_clients_names() -> None:
    body = {
        "model": "gpt-oss-20b",
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [WEATHER],
        "tool_choice": {"type": "function", "function": {"name": "x"}},
    }
    with pytest.raises(ApiError, match=r"it offers get-weather\)"):
        ChatReader().read(body, ("gpt-oss-20b",), GenerationSettings())


def test_a_response_echoes_its_tools_and_choice_by_the_clients_names() -> None:
    body = {"model": "gpt-oss-20b", "input": "hi", "tools": [FLAT],
            "tool_choice": {"type": "function", "name": "get-weather"}}  # fmt: skip
    asked = ResponsesReader().read(body, ("gpt-oss-20b",), GenerationSettings())
    response = ResponsesReply(asked).response()
    assert [t["name"] for t in response["tools"]] == ["get-weather"]
    assert response["tool_choice"] == {"type": "function", "name": "get-weather"}


def test_a_namespace_whose_name_is_no_identifier_goes_safe_and_back(served: Running) -> None:
    """The Responses API's namespaces (Codex groups tools so) are named like tools: the model
    sees ``my_server.read_file``, the client gets its ``my-server`` and ``read-file`` back, and
    reads them back in the history."""
    space = {"type": "namespace", "name": "my-server", "description": "A server's tools.",
             "tools": [{"type": "function", **function("read-file")}]}  # fmt: skip
    body = {"model": "gpt-oss-tiny", "input": QUESTION, "tools": [space]}
    status, raw = post(served, "/v1/responses", body)
    assert status == 200, raw
    reply = json.loads(raw)
    (call,) = [item for item in reply["output"] if item["type"] == "function_call"]
    assert (call["namespace"], call["name"]) == ("my-server", "read-file")
    assert reply["tools"][0]["name"] == "my-server"
    assert reply["tools"][0]["tools"][0]["name"] == "read-file"
    (tool,) = served.seen.conversations[-1].tools
    assert (tool.namespace, tool.name) == ("my_server", "read_file")
    sent = {key: call[key] for key in ("type", "call_id", "name", "namespace", "arguments")}
    answer = {"type": "function_call_output", "call_id": call["call_id"], "output": OUTPUT}
    history = [{"role": "user", "content": QUESTION}, sent, answer]
    status, raw = post(served, "/v1/responses", {**body, "input": history})
    assert status == 200, raw
    _, made, result = served.seen.conversations[-1].messages
    assert [(c.namespace, c.name) for c in made.tool_calls] == [("my_server", "read_file")]
    assert result.tool_name == "read_file"
    choice = {"type": "function", "name": "read-file", "namespace": "my-server"}
    asked = ResponsesReader().read({**body, "tool_choice": choice}, ("gpt-oss-tiny",),
                                   GenerationSettings())  # fmt: skip
    assert (asked.request.tool_choice.namespace, asked.request.tool_choice.name) == (
        "my_server", "read_file")  # fmt: skip


def test_a_forced_call_that_cannot_be_held_names_the_tool_as_the_client_does() -> None:
    loop = {"type": "object", "properties": {"me": {"$ref": "#"}}, "required": ["me"]}
    tool = {"type": "function", "function": {"name": "nest-me", "parameters": loop}}
    body = {"model": "gpt-oss-20b", "messages": [{"role": "user", "content": "hi"}],
            "tools": [tool], "tool_choice": "required"}  # fmt: skip
    with pytest.raises(ApiError, match="the parameters of 'nest-me' cannot be answered"):
        ChatReader().read(body, ("gpt-oss-20b",), GenerationSettings())
