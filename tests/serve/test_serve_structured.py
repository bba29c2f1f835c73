"""Structured outputs through the real `openai` client, on the tiny model: `.parse` with a
pydantic model over both APIs, streamed and not, `json_object`, a schema with tools offered
(the model may still call one), bad schemas, and an answer that misses its schema.

STEERING (format_helpers.FormatSteering): the model's JSON is written by a grammar in the
test, so the replies are exact; the engine's own constraint is test_serve_engine_constraint.py's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pydantic
import pytest
from format_helpers import format_server, loads
from openai.lib._pydantic import to_strict_json_schema
from serve_helpers import Running

from gptoss_local.backends.base import ResponseFormat


class Weather(pydantic.BaseModel):
    city: str
    sunny: bool


class GetWeather(pydantic.BaseModel):
    """The weather in a city."""

    city: str


SCHEMA = {"type": "object",
          "properties": {"city": {"type": "string"}, "sunny": {"type": "boolean"}},
          "required": ["city", "sunny"], "additionalProperties": False}  # fmt: skip
CHAT_SCHEMA = {"type": "json_schema", "json_schema": {"name": "weather", "schema": SCHEMA,
                                                      "strict": True}}  # fmt: skip
HI = [{"role": "user", "content": "weather in Tokyo?"}]


@pytest.fixture(scope="module")
def served(tiny_gguf: Path) -> Iterator[Running]:
    with format_server(tiny_gguf) as running:
        yield running


@pytest.fixture
def client(served: Running) -> openai.OpenAI:
    return openai.OpenAI(base_url=served.url, api_key="unused", max_retries=0, timeout=60)


def asked_format(served: Running) -> ResponseFormat | None:
    return served.steering.requests[-1].response_format


def test_chat_parse_with_a_pydantic_model(client: openai.OpenAI, served: Running) -> None:
    done = client.chat.completions.parse(model="tiny", messages=HI, response_format=Weather)
    message = done.choices[0].message
    assert message.parsed == Weather(city="Tokyo", sunny=True)
    assert loads(message.content) == {"city": "Tokyo", "sunny": True}
    assert done.choices[0].finish_reason == "stop"
    assert message.model_extra and message.model_extra["reasoning_content"] == "Need JSON"
    assert asked_format(served) == ResponseFormat(to_strict_json_schema(Weather), "Weather", True)


def test_responses_parse_with_a_pydantic_model(client: openai.OpenAI, served: Running) -> None:
    done = client.responses.parse(model="tiny", input="weather in Tokyo?", text_format=Weather)
    assert done.output_parsed == Weather(city="Tokyo", sunny=True)
    assert done.status == "completed"
    assert done.text.format is not None and done.text.format.type == "json_schema"
    assert asked_format(served) == ResponseFormat(to_strict_json_schema(Weather), "Weather", True)


def test_chat_stream_with_a_pydantic_model(client: openai.OpenAI) -> None:
    with client.chat.completions.stream(
        model="tiny", messages=HI, response_format=Weather
    ) as stream:
        kinds = {type(event).__name__ for event in stream}
        final = stream.get_final_completion()
    assert final.choices[0].message.parsed == Weather(city="Tokyo", sunny=True)
    assert "ContentDeltaEvent" in kinds


def test_responses_stream_with_a_pydantic_model(client: openai.OpenAI) -> None:
    with client.responses.stream(
        model="tiny", input="weather in Tokyo?", text_format=Weather
    ) as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_response()
    assert final.output_parsed == Weather(city="Tokyo", sunny=True)
    assert "response.output_text.delta" in kinds and kinds[-1] == "response.completed"


def test_a_schema_as_raw_json_over_both_apis(client: openai.OpenAI, served: Running) -> None:
    chat = client.chat.completions.create(model="tiny", messages=HI, response_format=CHAT_SCHEMA)
    assert loads(chat.choices[0].message.content) == {"city": "Tokyo", "sunny": True}
    assert asked_format(served) == ResponseFormat(SCHEMA, "weather", True)
    text_format = {"format": {"type": "json_schema", "name": "weather", "schema": SCHEMA}}
    response = client.responses.create(model="tiny", input="weather?", text=text_format)
    assert loads(response.output_text) == {"city": "Tokyo", "sunny": True}
    assert asked_format(served) == ResponseFormat(SCHEMA, "weather", strict=False)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_json_object_over_both_apis(client: openai.OpenAI, served: Running, stream: bool) -> None:
    chat = client.chat.completions.create(
        model="tiny", messages=HI, response_format={"type": "json_object"}, stream=stream
    )
    content = (
        "".join(c.choices[0].delta.content or "" for c in chat if c.choices)
        if stream else chat.choices[0].message.content
    )  # fmt: skip
    assert loads(content) == {"ok": True}
    assert asked_format(served) == ResponseFormat(None, "json_object", False)
    if stream:
        with client.responses.stream(
            model="tiny", input="hi", text={"format": {"type": "json_object"}}
        ) as events:
            response = events.get_final_response()
    else:
        response = client.responses.create(
            model="tiny", input="hi", text={"format": {"type": "json_object"}}
        )
    assert loads(response.output_text) == {"ok": True}
    assert response.text.format is not None and response.text.format.type == "json_object"


def test_with_tools_offered_the_model_may_still_call_one(
    client: openai.OpenAI, served: Running
) -> None:
    tools = [openai.pydantic_function_tool(GetWeather)]
    first = client.chat.completions.parse(
        model="tiny", messages=HI, response_format=Weather, tools=tools
    )
    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.parsed is None
    call = choice.message.tool_calls[0]
    assert call.function.parsed_arguments == GetWeather(city="Tokyo")
    assert served.steering.requests[-1].response_format is not None
    follow: list[Any] = [*HI, choice.message.model_dump(exclude_none=True),
                         {"role": "tool", "tool_call_id": call.id, "content": "sunny"}]  # fmt: skip
    second = client.chat.completions.parse(
        model="tiny", messages=follow, response_format=Weather, tools=tools
    )
    assert second.choices[0].message.parsed == Weather(city="Tokyo", sunny=True)


@pytest.mark.parametrize(
    ("path", "body", "param"),
    [
        ("chat", {"response_format": {"type": "json_schema",
                                      "json_schema": {"name": "x", "schema": [1]}}},
         "response_format.json_schema.schema"),
        ("chat", {"response_format": {"type": "json_schema",
                                      "json_schema": {"name": "x", "schema": {"type": 5}}}},
         "response_format.json_schema.schema"),
        ("chat", {"response_format": {"type": "xml"}}, "response_format.type"),
        ("responses", {"text": {"format": {"type": "json_schema", "name": "x", "schema": "{}"}}},
         "text.format.schema"),
        ("responses", {"text": {"format": {"type": "json_schema", "name": "x",
                                           "schema": {"required": "city"}}}},
         "text.format.schema"),
    ],
)  # fmt: skip
def test_a_bad_schema_is_a_400_naming_the_field(
    client: openai.OpenAI, path: str, body: dict[str, Any], param: str
) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        if path == "chat":
            client.chat.completions.create(model="tiny", messages=HI, **body)
        else:
            client.responses.create(model="tiny", input="hi", **body)
    assert refused.value.param == param


def test_an_answer_that_misses_its_schema_is_a_server_error(client: openai.OpenAI) -> None:
    # STEERING only: the steered answer for the format named "broken" misses the schema,
    # which an engine holding the schema never lets happen.
    broken = {"type": "json_schema", "json_schema": {"name": "broken", "schema": SCHEMA}}
    with pytest.raises(openai.InternalServerError) as failed:
        client.chat.completions.create(model="tiny", messages=HI, response_format=broken)
    assert failed.value.code == "response_format_mismatch"
    assert "does not match the requested response format" in failed.value.message
    chunks = client.chat.completions.create(
        model="tiny", messages=HI, response_format=broken, stream=True
    )
    with pytest.raises(openai.APIError, match="does not match"):
        for _ in chunks:
            pass
    events = client.responses.create(model="tiny", input="hi", stream=True, text={
        "format": {"type": "json_schema", "name": "broken", "schema": SCHEMA}})  # fmt: skip
    kinds = []
    with pytest.raises(openai.APIError, match="does not match"):
        for event in events:
            kinds.append(event.type)
    assert "response.completed" not in kinds
