"""What `/v1/responses` accepts of a stateless client's request (Codex CLI's shapes) and what
it still refuses, read without a model."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from gptoss_local.backends.base import (
    BackendInfo,
    Capabilities,
    GenerationSettings,
    Reply,
    ReplyRequest,
)
from gptoss_local.serve.chat_request import ChatReader
from gptoss_local.serve.errors import ApiError
from gptoss_local.serve.responses_request import ResponsesReader
from gptoss_local.serve.service import Service

NAMES = ("gpt-oss-20b", "20b")
DEFAULTS = GenerationSettings(effort="medium")
read_responses, read_chat = ResponsesReader().read, ChatReader().read
ADD = {"type": "function", "name": "add", "parameters": {"type": "object"}}
MATHS = {"type": "namespace", "name": "maths", "description": "Sums.", "tools": [ADD]}


def request(**fields: Any) -> dict[str, Any]:
    return {"model": "20b", "input": "hi", **fields}


def test_a_stateless_clients_fields_are_accepted() -> None:
    asked = read_responses(
        request(
            input=[
                {"type": "message", "id": "msg_1", "role": "developer",
                 "content": [{"type": "input_text", "text": "Be brief."}]},
                {"type": "message", "id": "msg_2", "role": "user", "content": None},
                {"type": "message", "id": "msg_3", "role": "user",
                 "content": [{"type": "input_text", "text": "hi"}]},
                {"type": "message", "id": "msg_4", "role": "assistant",
                 "content": [{"type": "output_text", "text": "Hello."}]},
                {"type": "message", "id": "msg_5", "role": "user", "content": "again"},
            ],
            store=False, parallel_tool_calls=True, prompt_cache_key="k-1",
            client_metadata={"turn_id": "t"}, include=["reasoning.encrypted_content"],
            reasoning={"summary": "auto"}, tools=[MATHS, {"type": "web_search"}],
        ),
        NAMES, DEFAULTS,
    )  # fmt: skip
    c = asked.request.conversation
    assert c.instructions == "Be brief."
    assert [(m.role, m.content) for m in c.messages] == [
        ("user", ""), ("user", "hi"), ("assistant", "Hello."), ("user", "again")
    ]  # fmt: skip
    assert [(t.namespace, t.name, t.namespace_description) for t in c.tools] == [
        ("maths", "add", "Sums.")
    ]  # fmt: skip
    assert asked.carry_reasoning
    assert not read_responses(request(include=[]), NAMES, DEFAULTS).carry_reasoning


def test_a_function_call_with_a_namespace_goes_back_to_that_namespace() -> None:
    asked = read_responses(
        request(input=[
            {"role": "user", "content": "add"},
            {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "add",
             "namespace": "maths", "arguments": "{}", "status": "completed"},
            {"type": "function_call_output", "id": "fco_1", "call_id": "c1", "output": "3"},
        ], tools=[MATHS]),
        NAMES, DEFAULTS,
    )  # fmt: skip
    call = asked.request.conversation.messages[1].tool_calls[0]
    assert (call.namespace, call.name) == ("maths", "add")


@pytest.mark.parametrize(
    ("fields", "param"),
    [
        ({"include": ["message.output_text.logprobs"]}, "include"),
        ({"include": "reasoning.encrypted_content"}, "include"),
        ({"reasoning": {"summary": "verbose"}}, "reasoning.summary"),
        ({"store": "no"}, "store"),
        ({"parallel_tool_calls": 1}, "parallel_tool_calls"),
        ({"prompt_cache_key": 7}, "prompt_cache_key"),
        ({"client_metadata": "x"}, "client_metadata"),
        ({"tools": [{**MATHS, "tools": []}]}, "tools[0]"),
        ({"tools": [{**MATHS, "name": "python"}]}, "tools[0]"),
        ({"tools": [{**MATHS, "name": "a b"}]}, "tools[0]"),  # "a.b" is served, as a_b
        ({"tools": [{"type": "custom", "name": "patch",
                     "format": {"type": "grammar", "syntax": "ebnf", "definition": "x"}}]},
         "tools[0]"),
        ({"tools": [MATHS, {**MATHS, "description": ""}]}, "input"),  # maths.add twice
    ],
)  # fmt: skip
def test_what_still_cannot_be_honoured_is_refused(fields: dict[str, Any], param: str) -> None:
    with pytest.raises(ApiError) as refused:
        read_responses(request(**fields), NAMES, DEFAULTS)
    assert refused.value.status == 400 and refused.value.param == param


def test_chat_completions_has_no_namespaces() -> None:
    body = {"model": "20b", "messages": [{"role": "user", "content": "x"}], "tools": [MATHS]}
    with pytest.raises(ApiError) as refused:
        read_chat(body, NAMES, DEFAULTS)
    assert refused.value.param == "tools[0]"


class _FlatTools:
    """An engine that offers function tools but writes no namespaces (never asked for one)."""

    capabilities = Capabilities(tools=True)

    def info(self) -> BackendInfo:
        return BackendInfo("flat", "gpt-oss-20b", "CPU", 4096)

    def stream(self, request: ReplyRequest, cancel: threading.Event | None = None) -> Reply:
        raise AssertionError("a refused request never reaches the engine")


def test_an_engine_without_namespaces_refuses_them_before_the_queue() -> None:
    service = Service(_FlatTools(), NAMES, DEFAULTS)  # type: ignore[arg-type]
    with pytest.raises(ApiError) as refused:
        service.post("/v1/responses", request(tools=[MATHS]), threading.Event())
    assert refused.value.status == 400 and refused.value.param == "tools"
    assert "namespaces" in refused.value.message
