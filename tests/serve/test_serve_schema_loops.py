"""A schema whose refs loop with no way out, over HTTP on the tiny model: a 400 naming the
schema, the field and the loop, before the model is asked (it was a 500, "llama.cpp refused
the reply's grammar", once the request had waited for the model); a grammar llama.cpp still
refuses is the request's 400 too; a tree, which can end, is answered.

STEERING (format_helpers.EngineSteering): the steering writes the reasoning, the engine's own
grammar writes the JSON."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from format_helpers import engine_server
from serve_helpers import Running

from gptoss_local.backends.llamacpp import backend as llama_cpp
from gptoss_local.backends.llamacpp.structured import ReplyGrammar

CHAT, RESPONSES = "/v1/chat/completions", "/v1/responses"
SELF = {"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}
KIDS = {"type": "array", "items": {"$ref": "#"}, "maxItems": 2}
TREE = {"type": "object", "additionalProperties": False, "required": ["leaf"],
        "properties": {"leaf": {"type": "boolean"}, "children": KIDS}}  # fmt: skip
HI = [{"role": "user", "content": "weather in Tokyo?"}]


@pytest.fixture(scope="module")
def served(tiny_gguf: Path) -> Iterator[Running]:
    with engine_server(tiny_gguf) as running:
        yield running


def post(served: Running, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=120)
    try:
        connection.request("POST", path, body=json.dumps(body),
                           headers={"Content-Type": "application/json"})  # fmt: skip
        answer = connection.getresponse()
        return answer.status, json.loads(answer.read())
    finally:
        connection.close()


def chat_format(schema: dict[str, Any], name: str = "loop") -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}


@pytest.mark.parametrize(
    ("path", "body", "param"),
    [
        (CHAT, {"messages": HI, "response_format": chat_format(SELF)},
         "response_format.json_schema.schema"),
        (RESPONSES, {"input": "hi", "text": {"format": {"type": "json_schema", "name": "loop",
                                                        "schema": SELF}}}, "text.format.schema"),
    ],
)  # fmt: skip
def test_a_schema_that_is_only_a_self_reference_is_a_400(
    served: Running, path: str, body: dict[str, Any], param: str
) -> None:
    asked = len(served.seen.conversations)
    status, answer = post(served, path, {"model": "tiny", **body})
    assert status == 400, answer
    error = answer["error"]
    assert error["type"] == "invalid_request_error" and error["param"] == param
    assert "the schema 'loop'" in error["message"]
    assert "#/$defs/a refers only to itself" in error["message"]
    assert len(served.seen.conversations) == asked  # the model was not asked


def test_a_forced_call_of_a_tool_whose_parameters_loop_is_a_400(served: Running) -> None:
    params = {"type": "object", "properties": {"me": {"$ref": "#"}}, "required": ["me"]}
    tools = [{"type": "function", "function": {"name": "nest", "parameters": params}}]
    status, answer = post(served, CHAT, {"model": "tiny", "messages": HI, "tools": tools,
                                         "tool_choice": "required"})  # fmt: skip
    assert status == 400, answer
    assert answer["error"]["param"] == "tool_choice"
    assert "the parameters of 'nest'" in answer["error"]["message"]
    assert "# needs itself with no way out" in answer["error"]["message"]


@pytest.mark.parametrize("seed", [1, 2])
def test_a_tree_which_can_end_is_answered(served: Running, seed: int) -> None:
    status, answer = post(served, CHAT, {"model": "tiny", "messages": HI, "seed": seed,
                                         "max_tokens": 400,
                                         "response_format": chat_format(TREE, "tree")})  # fmt: skip
    assert status == 200, answer
    choice = answer["choices"][0]
    if choice["finish_reason"] == "stop":  # a random model may nest past max_tokens
        jsonschema.validate(json.loads(choice["message"]["content"]), TREE)


def test_a_grammar_llama_cpp_refuses_is_the_requests_400(
    served: Running, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last line of defence: a grammar made from the request that llama.cpp still refuses
    (here one put in place of the schema's, since the checks now refuse every such schema
    known) is the request's fault, before the reply, not a 500."""
    refused = ReplyGrammar("root ::= rest\nrest ::= root", True, ("<|endoftext|>",))
    monkeypatch.setattr(llama_cpp, "reply_grammar", lambda request: refused)
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    status, answer = post(served, CHAT, {"model": "tiny", "messages": HI,
                                         "response_format": chat_format(schema)})  # fmt: skip
    assert status == 400, answer
    assert answer["error"]["param"] == "response_format"
    assert "llama.cpp refused the grammar made from the schema" in answer["error"]["message"]
