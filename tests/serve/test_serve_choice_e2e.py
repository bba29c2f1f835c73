"""A forced tool choice, penalties and logit biases reach the backend's `ReplyRequest`; a tool
call cut off by the token limit is reported as cut ("length", `incomplete`), never as a call;
the context error tells an API client what to do. Through the real `openai` client on the
tiny model (STEERING: see format_helpers)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from format_helpers import format_server
from serve_helpers import Running

from gptoss_local.backends.base import ReplyRequest, ToolChoice

TOOLS: list[Any] = [
    {"type": "function", "function": {"name": "get_weather", "description": "The weather.",
                                      "parameters": {"type": "object", "properties": {
                                          "city": {"type": "string"}}}}},
    {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}},
]  # fmt: skip
FLAT_TOOLS: list[Any] = [{"type": "function", **t["function"]} for t in TOOLS]
HI = [{"role": "user", "content": "weather in Tokyo?"}]


@pytest.fixture(scope="module")
def served(tiny_gguf: Path) -> Iterator[Running]:
    with format_server(tiny_gguf) as running:
        yield running


@pytest.fixture
def client(served: Running) -> openai.OpenAI:
    return openai.OpenAI(base_url=served.url, api_key="unused", max_retries=0, timeout=60)


def last(served: Running) -> ReplyRequest:
    request: ReplyRequest = served.steering.requests[-1]
    return request


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("required", ToolChoice(required=True)),
        ({"type": "function", "function": {"name": "get_time"}}, ToolChoice(name="get_time")),
        ("auto", ToolChoice()),
    ],
)
def test_chat_tool_choice_reaches_the_backend(
    client: openai.OpenAI, served: Running, choice: Any, expected: ToolChoice
) -> None:
    done = client.chat.completions.create(model="tiny", messages=HI, tools=TOOLS,
                                          tool_choice=choice)  # fmt: skip
    assert done.choices[0].finish_reason == "tool_calls"
    assert last(served).tool_choice == expected


def test_responses_tool_choice_reaches_the_backend(client: openai.OpenAI, served: Running) -> None:
    chosen = {"type": "function", "name": "get_time"}
    named = client.responses.create(model="tiny", input="hi", tools=FLAT_TOOLS, tool_choice=chosen)
    assert last(served).tool_choice == ToolChoice(name="get_time")
    assert named.tool_choice.name == "get_time"
    client.responses.create(model="tiny", input="hi", tools=FLAT_TOOLS, tool_choice="required")
    assert last(served).tool_choice == ToolChoice(required=True)


def test_allowed_tools_offers_only_those(client: openai.OpenAI, served: Running) -> None:
    only = [{"type": "function", "function": {"name": "get_time"}}]
    allowed = {"type": "allowed_tools", "allowed_tools": {"mode": "required", "tools": only}}
    client.chat.completions.create(model="tiny", messages=HI, tools=TOOLS, tool_choice=allowed)
    assert [t.name for t in last(served).conversation.tools] == ["get_time"]
    assert last(served).tool_choice == ToolChoice(required=True)
    allowed = {"type": "allowed_tools", "mode": "auto",
               "tools": [{"type": "function", "name": "get_weather"}]}  # fmt: skip
    client.responses.create(model="tiny", input="hi", tools=FLAT_TOOLS, tool_choice=allowed)
    assert [t.name for t in last(served).conversation.tools] == ["get_weather"]
    assert last(served).tool_choice == ToolChoice()


def test_choosing_a_tool_not_offered_is_a_400(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError, match="does not offer") as refused:
        client.chat.completions.create(model="tiny", messages=HI, tools=TOOLS, tool_choice={
            "type": "function", "function": {"name": "get_mail"}})  # fmt: skip
    assert refused.value.param == "tool_choice"
    with pytest.raises(openai.BadRequestError) as bare:
        client.chat.completions.create(model="tiny", messages=HI, tool_choice="required")
    assert bare.value.param == "tool_choice"


def test_penalties_and_biases_reach_the_backend(client: openai.OpenAI, served: Running) -> None:
    biases = {"17": 5, "3": -100}
    client.chat.completions.create(
        model="tiny", messages=HI, frequency_penalty=0.5, presence_penalty=-1, logit_bias=biases
    )
    settings = last(served).settings
    assert (settings.frequency_penalty, settings.presence_penalty) == (0.5, -1.0)
    assert settings.logit_bias == ((3, -100.0), (17, 5.0))
    with pytest.raises(openai.BadRequestError) as refused:
        client.chat.completions.create(model="tiny", messages=HI, presence_penalty=2.5)
    assert refused.value.param == "presence_penalty"
    with pytest.raises(openai.BadRequestError) as bad_key:
        client.chat.completions.create(model="tiny", messages=HI, logit_bias={"the": 1})
    assert bad_key.value.param == "logit_bias"


# The grammar lets the model spell the call in tokens of different lengths: a seed makes the
# spelling, and so the count, the same each time.
SEED = 7


def calling_tokens(client: openai.OpenAI) -> int:
    """The tokens of the steered call, whole (its <|call|> included)."""
    whole = client.chat.completions.create(model="tiny", messages=HI, tools=TOOLS, seed=SEED)
    assert whole.choices[0].finish_reason == "tool_calls" and whole.usage is not None
    return whole.usage.completion_tokens


def test_a_tool_call_cut_by_max_tokens_is_length_not_a_call(client: openai.OpenAI) -> None:
    cut = calling_tokens(client) - 3  # inside the arguments: `{"city": "Tok` or so
    done = client.chat.completions.create(model="tiny", messages=HI, tools=TOOLS, max_tokens=cut,
                                          seed=SEED)  # fmt: skip
    assert done.choices[0].finish_reason == "length"
    assert done.choices[0].message.tool_calls is None
    streamed = client.chat.completions.create(model="tiny", messages=HI, tools=TOOLS,
                                              max_tokens=cut, stream=True, seed=SEED)  # fmt: skip
    chunks = list(streamed)
    assert chunks[-1].choices[0].finish_reason == "length"
    assert not any(c.choices[0].delta.tool_calls for c in chunks)


def test_a_response_whose_call_was_cut_is_incomplete(client: openai.OpenAI) -> None:
    cut = calling_tokens(client) - 3
    seeded = {"seed": SEED}
    done = client.responses.create(model="tiny", input=HI, tools=FLAT_TOOLS,
                                   max_output_tokens=cut, extra_body=seeded)  # fmt: skip
    assert done.status == "incomplete"
    assert done.incomplete_details is not None
    assert done.incomplete_details.reason == "max_output_tokens"
    assert [item.type for item in done.output] == ["reasoning"]
    with client.responses.stream(model="tiny", input=HI, tools=FLAT_TOOLS,
                                 max_output_tokens=cut, extra_body=seeded) as events:  # fmt: skip
        kinds = [event.type for event in events]
    assert kinds[-1] == "response.incomplete"
    assert not any(kind.startswith("response.function_call") for kind in kinds)


def test_the_context_error_speaks_to_api_clients(client: openai.OpenAI) -> None:
    long = [{"role": "user", "content": "word " * 3000}]  # more than the 2,048-token context
    with pytest.raises(openai.BadRequestError) as full:
        client.chat.completions.create(model="tiny", messages=long)
    assert full.value.code == "context_length_exceeded" and full.value.param == "messages"
    assert "--context" in full.value.message and "new chat" not in full.value.message
    with pytest.raises(openai.BadRequestError) as responses:
        client.responses.create(model="tiny", input="word " * 3000)
    assert responses.value.param == "input" and "Shorten the conversation" in str(responses.value)
