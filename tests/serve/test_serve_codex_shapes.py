"""`/v1/responses` takes what Codex CLI sends on its first and later requests: tools grouped in
namespaces, web search (left out offline), `store: false`, `include`, `prompt_cache_key`,
`client_metadata`, items with ids, and reasoning handed out and back as `encrypted_content`.
The requests are our own, in the shapes recorded from Codex 0.171; the client is the real
`openai` SDK on the tiny model's server (serve_helpers.py steers its replies)."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from serve_helpers import Running, running_server

from gptoss_local.harmony import render_prompt
from gptoss_local.serve.carried import seal, unseal

WEATHER = {
    "type": "function", "name": "get_weather", "description": "The weather in a city.",
    "strict": False, "parameters": {"type": "object", "additionalProperties": False,
                                    "properties": {"city": {"type": "string"}}},
}  # fmt: skip
HELPERS = {
    "type": "namespace", "name": "helpers", "description": "Helpers that look things up.",
    "tools": [{**WEATHER, "name": "forecast"}, {**WEATHER, "name": "rainfall"}],
}  # fmt: skip
WEB = {"type": "web_search", "external_web_access": False}
STATELESS = {
    "store": False, "parallel_tool_calls": True, "tool_choice": "auto",
    "reasoning": {"summary": "auto"}, "include": ["reasoning.encrypted_content"],
    "prompt_cache_key": "0b1c-conversation",
}  # fmt: skip
METADATA = {"client_metadata": {"session_id": "s-1", "turn_id": "t-1"}}


def said(role: str, text: str, number: int) -> dict[str, Any]:
    """A message item with an id and input_text parts, as a stateless client sends them."""
    return {"type": "message", "id": f"msg_{number}", "role": role,
            "content": [{"type": "input_text", "text": text}]}  # fmt: skip


FIRST_TURN = [
    said("developer", "You help with the weather.", 1),
    said("user", "<context>a test</context>", 2),
    said("user", "weather in Tokyo?", 3),
]


@pytest.fixture(scope="module")
def served(tiny_gguf: Path) -> Iterator[Running]:
    with running_server(tiny_gguf) as running:
        yield running


@pytest.fixture
def client(served: Running) -> openai.OpenAI:
    return openai.OpenAI(base_url=served.url, api_key="unused", max_retries=0, timeout=60)


def first_turn(client: openai.OpenAI, tools: list[dict[str, Any]]) -> list[Any]:
    """The first request, streamed; its events."""
    return list(
        client.responses.create(model="tiny", input=FIRST_TURN, tools=tools, stream=True,
                                **STATELESS, extra_body=METADATA)  # type: ignore[arg-type]
    )  # fmt: skip


def test_a_call_into_a_namespace_comes_back_with_its_namespace(
    client: openai.OpenAI, served: Running
) -> None:
    events = first_turn(client, [HELPERS, WEATHER, WEB])
    final = events[-1]
    assert final.type == "response.completed"
    assert [item.type for item in final.response.output] == ["reasoning", "function_call"]
    call = final.response.output[1]
    assert (call.name, call.namespace) == ("forecast", "helpers")
    assert json.loads(call.arguments) == {"city": "Tokyo"}
    done = [e.item for e in events if e.type == "response.output_item.done"]
    assert done[1].namespace == "helpers"
    conversation = served.seen.conversations[-1]
    assert [(t.namespace, t.name) for t in conversation.tools] == [
        ("helpers", "forecast"), ("helpers", "rainfall"), ("functions", "get_weather")
    ]  # fmt: skip
    assert conversation.instructions == "You help with the weather."
    usage = final.response.usage
    assert usage.total_tokens == usage.input_tokens + usage.output_tokens > 0


def test_web_search_is_left_out_and_the_log_says_so(
    client: openai.OpenAI, served: Running, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="gptoss_local.serve"):
        first_turn(client, [WEATHER, WEB])
    assert [t.name for t in served.seen.conversations[-1].tools] == ["get_weather"]
    said = [r.getMessage() for r in caplog.records if "web_search" in r.getMessage()]
    assert said == ["tools[1] (web_search) left out: this server does not reach the internet"]


def test_reasoning_goes_out_sealed_and_comes_back_into_the_chain(
    client: openai.OpenAI, served: Running
) -> None:
    events = first_turn(client, [HELPERS])
    reasoning, call = events[-1].response.output
    assert unseal(reasoning.encrypted_content) == "Need the weather"
    # The next request, as Codex sends it: the first turn's items again, the reasoning with
    # no content, the call with its namespace, the output.
    back = {"type": "reasoning", "id": reasoning.id, "summary": [], "content": None,
            "encrypted_content": reasoning.encrypted_content}  # fmt: skip
    output = {"type": "function_call_output", "id": "fco_1", "call_id": call.call_id,
              "output": "clear skies"}  # fmt: skip
    follow = [*FIRST_TURN, back, call.model_dump(exclude_none=True), output]
    second = client.responses.create(model="tiny", input=follow, tools=[HELPERS], **STATELESS)
    assert second.output_text == "Hello there"
    assert unseal(second.output[0].encrypted_content) == "The user says hi"
    sent = served.seen.conversations[-1]
    assistant, result = sent.messages[-2:]
    assert assistant.reasoning == "Need the weather"
    assert (assistant.tool_calls[0].namespace, assistant.tool_calls[0].name) == (
        "helpers", "forecast"
    )  # fmt: skip
    prompt = render_prompt(list(sent.messages), tools=sent.tools)
    assert "<|channel|>analysis<|message|>Need the weather<|end|>" in prompt
    assert "to=helpers.forecast<|channel|>commentary" in prompt
    assert "<|start|>helpers.forecast to=assistant<|channel|>commentary<|message|>clear" in prompt
    assert result.role == "tool"


def test_reasoning_is_sealed_only_when_asked_for(client: openai.OpenAI) -> None:
    plain = client.responses.create(model="tiny", input="hi", store=False)
    assert plain.output[0].type == "reasoning" and plain.output[0].encrypted_content is None


def test_a_stateless_clients_stream_has_the_events_it_reads_in_order(
    client: openai.OpenAI,
) -> None:
    types = [e.type for e in first_turn(client, [WEATHER])]
    assert types[:2] == ["response.created", "response.in_progress"]
    assert types[-1] == "response.completed"
    call_at = types.index("response.function_call_arguments.delta")
    assert types[call_at - 1] == "response.output_item.added"
    assert types[call_at + 1 : call_at + 3] == [
        "response.function_call_arguments.done", "response.output_item.done"
    ]  # fmt: skip
    # A summary was asked for: gpt-oss writes none, so the reasoning itself goes out as one.
    text_at = types.index("response.reasoning_summary_text.delta")
    assert types[text_at - 2 : text_at] == [
        "response.output_item.added", "response.reasoning_summary_part.added"
    ]  # fmt: skip
    assert "response.reasoning_text.delta" not in types
    done = types.index("response.reasoning_summary_text.done")
    assert types[done + 1 : done + 3] == [
        "response.reasoning_summary_part.done", "response.output_item.done"
    ]  # fmt: skip


def test_without_a_summary_asked_the_reasoning_is_its_content(client: openai.OpenAI) -> None:
    asked = {**STATELESS, "reasoning": {"summary": "none"}}
    events = list(client.responses.create(model="tiny", input=FIRST_TURN, tools=[WEATHER],
                                          stream=True, **asked))  # type: ignore[arg-type]  # fmt: skip
    types = [e.type for e in events]
    text_at = types.index("response.reasoning_text.delta")
    assert types[text_at - 2 : text_at] == [
        "response.output_item.added", "response.content_part.added"
    ]  # fmt: skip
    reasoning = events[-1].response.output[0]
    assert reasoning.summary == [] and reasoning.content[0].text == "Need the weather"


def test_a_summary_asked_for_carries_the_reasoning(client: openai.OpenAI) -> None:
    reply = client.responses.create(model="tiny", input=FIRST_TURN, tools=[WEATHER],
                                    **STATELESS)  # type: ignore[arg-type]  # fmt: skip
    reasoning = reply.output[0]
    assert [part.text for part in reasoning.summary] == ["Need the weather"]
    assert not reasoning.content


def test_a_reasoning_blob_from_elsewhere_falls_back_to_its_text() -> None:
    assert unseal(seal("a thought")) == "a thought"
    assert unseal("gAAAAABopaque==") is None and unseal(None) is None
    assert unseal("eyJhIjogMX0=") is None  # JSON, but not ours
