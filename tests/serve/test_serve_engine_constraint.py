"""Structured outputs and forced tool choices held by the llama.cpp engine itself, through the
real `openai` client on the tiny model: the steering writes only the reasoning, the engine's
grammar writes the JSON (format_helpers.EngineSteering). The model is random, so the schemas
bound what it can write (enums, booleans): any answer they accept is right."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import openai
import pydantic
import pytest
from format_helpers import engine_holds_formats, engine_server
from serve_helpers import Running

pytestmark = pytest.mark.skipif(
    not engine_holds_formats(), reason="the engine does not hold formats yet"
)


class Weather(pydantic.BaseModel):
    city: Literal["Tokyo", "Paris"]
    sunny: bool


CITY = {"type": "object", "properties": {"city": {"type": "string", "enum": ["Tokyo", "Paris"]}},
        "required": ["city"], "additionalProperties": False}  # fmt: skip
TOOLS: list[Any] = [
    {"type": "function", "function": {"name": "get_weather", "parameters": CITY}},
    {"type": "function", "function": {"name": "get_time"}},
]
HI = [{"role": "user", "content": "weather in Tokyo?"}]
ROOM = 300  # tokens: the steered reasoning and headers, and the bounded JSON


@pytest.fixture(scope="module")
def served(tiny_gguf: Path) -> Iterator[Running]:
    with engine_server(tiny_gguf) as running:
        yield running


@pytest.fixture
def client(served: Running) -> openai.OpenAI:
    return openai.OpenAI(base_url=served.url, api_key="unused", max_retries=0, timeout=120)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_engine_holds_the_answer_to_the_schema(client: openai.OpenAI, seed: int) -> None:
    done = client.chat.completions.parse(
        model="tiny", messages=HI, response_format=Weather, max_tokens=ROOM, seed=seed
    )
    assert done.choices[0].finish_reason == "stop"
    assert isinstance(done.choices[0].message.parsed, Weather)
    response = client.responses.parse(
        model="tiny", input="weather?", text_format=Weather, max_output_tokens=ROOM
    )
    assert isinstance(response.output_parsed, Weather)


def test_a_streamed_answer_held_by_the_engine(client: openai.OpenAI) -> None:
    with client.chat.completions.stream(
        model="tiny", messages=HI, response_format=Weather, max_tokens=ROOM
    ) as stream:
        final = stream.get_final_completion()
    assert isinstance(final.choices[0].message.parsed, Weather)


@pytest.mark.parametrize("seed", [1, 2])
def test_the_engine_makes_the_required_call(client: openai.OpenAI, seed: int) -> None:
    done = client.chat.completions.create(
        model="tiny", messages=HI, tools=TOOLS, tool_choice="required", max_tokens=ROOM,
        seed=seed,
    )  # fmt: skip
    assert done.choices[0].finish_reason == "tool_calls"
    call = done.choices[0].message.tool_calls[0]
    assert call.function.name in ("get_weather", "get_time")
    if call.function.name == "get_weather":
        assert json.loads(call.function.arguments)["city"] in ("Tokyo", "Paris")


def test_the_engine_calls_the_tool_named(client: openai.OpenAI) -> None:
    chosen = {"type": "function", "function": {"name": "get_weather"}}
    done = client.chat.completions.create(
        model="tiny", messages=HI, tools=TOOLS, tool_choice=chosen, max_tokens=ROOM
    )
    call = done.choices[0].message.tool_calls[0]
    assert call.function.name == "get_weather"
    assert json.loads(call.function.arguments)["city"] in ("Tokyo", "Paris")


def test_a_schema_the_engine_cannot_hold_is_a_400(client: openai.OpenAI) -> None:
    email = {"type": "object", "properties": {"to": {"type": "string", "format": "email"}}}
    fmt = {"type": "json_schema", "json_schema": {"name": "mail", "schema": email}}
    with pytest.raises(openai.BadRequestError) as refused:
        client.chat.completions.create(model="tiny", messages=HI, response_format=fmt)
    assert refused.value.param == "response_format.json_schema.schema"
    assert "format" in refused.value.message
    tools = [{"type": "function", "function": {"name": "send", "parameters": email}}]
    with pytest.raises(openai.BadRequestError) as forced:
        client.chat.completions.create(model="tiny", messages=HI, tools=tools,
                                       tool_choice="required")  # fmt: skip
    assert forced.value.param == "tool_choice"
