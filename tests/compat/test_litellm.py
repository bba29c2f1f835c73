"""LiteLLM's `completion()` against `serve`, as an OpenAI-compatible provider
("openai/<served name>" at `api_base`): chat, streaming, a tool round trip, a Pydantic
`response_format` and where the reasoning shows.

Where the reasoning shows: `message.reasoning_content` (the field as sent), and
`delta.reasoning_content` in a stream, which `stream_chunk_builder` joins into the message.
LiteLLM is imported under the offline guard, with its price map read from the package
(`LITELLM_LOCAL_MODEL_COST_MAP`), not fetched.
"""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

import pytest
from compat_helpers import (
    ANSWER,
    CALL_REASONING,
    HI,
    QUESTION,
    REASONING,
    STRUCTURED,
    WEATHER_TOOL,
    City,
    assert_city_json,
    assert_city_schema_reached,
    assert_round_trip,
    get_weather,
)
from serve_helpers import Running

# LiteLLM's own types, built when a stream is first read; nothing of the test's.
pytestmark = pytest.mark.filterwarnings("ignore:Item .* `ReadOnly` qualifier:UserWarning")


@pytest.fixture
def litellm(offline: None, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """LiteLLM, imported (the first time) while the network is off limits."""
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm  # about 2 s: only these tests pay it

    return litellm


@pytest.fixture
def complete(litellm: ModuleType, served: Running) -> Any:
    """`complete(messages, **more)`: `litellm.completion` against the server."""

    def call(messages: list[Any], **more: Any) -> Any:
        return litellm.completion(model="openai/gpt-oss-tiny", api_base=served.url,
                                  api_key="unused", messages=messages, **more)  # fmt: skip

    return call


def hi() -> list[dict[str, str]]:
    return [{"role": "user", "content": HI}]


def test_chat_keeps_reasoning_apart(complete: Any) -> None:
    choice = complete(hi()).choices[0]
    assert (choice.message.content, choice.finish_reason) == (ANSWER, "stop")
    assert choice.message.reasoning_content == REASONING
    assert getattr(choice.message, "thinking_blocks", None) is None


def test_streaming_keeps_reasoning_apart(complete: Any, litellm: ModuleType) -> None:
    chunks = list(complete(hi(), stream=True))
    deltas = [c.choices[0].delta for c in chunks]
    assert "".join(d.content or "" for d in deltas) == ANSWER
    assert "".join(getattr(d, "reasoning_content", None) or "" for d in deltas) == REASONING
    assert sum(1 for d in deltas if d.content) > 1  # streamed, not one piece
    message = litellm.stream_chunk_builder(chunks).choices[0].message
    assert (message.content, message.reasoning_content) == (ANSWER, REASONING)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_a_tool_round_trip(
    complete: Any, litellm: ModuleType, served: Running, stream: bool
) -> None:
    messages: list[Any] = [{"role": "user", "content": QUESTION}]
    first = complete(messages, tools=[WEATHER_TOOL], stream=stream)
    if stream:
        first = litellm.stream_chunk_builder(list(first))
    assert first.choices[0].finish_reason == "tool_calls"
    message = first.choices[0].message
    (call,) = message.tool_calls
    assert call.function.name == "get_weather"
    output = get_weather(**json.loads(call.function.arguments))
    messages += [message, {"role": "tool", "tool_call_id": call.id, "content": output}]
    second = complete(messages, tools=[WEATHER_TOOL])
    assert second.choices[0].message.content == ANSWER
    assert_round_trip(served, CALL_REASONING)  # the message goes back with its reasoning_content


def test_a_pydantic_response_format(complete: Any, served: Running) -> None:
    done = complete([{"role": "user", "content": STRUCTURED}], response_format=City)
    assert_city_json(done.choices[0].message.content)
    assert_city_schema_reached(served)
