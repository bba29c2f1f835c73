"""The `anthropic` Python SDK (pinned) against `serve`'s Messages API on the tiny model: a
message and its stream (the SDK's stream helpers), thinking blocks that go back unchanged and
reach the prompt, a tool round trip, stop sequences, count_tokens, the key as `x-api-key`, and
the errors the SDK raises."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import pytest
from compat_helpers import (
    ANSWER,
    CALL_REASONING,
    HI,
    QUESTION,
    REASONING,
    assert_round_trip,
    get_weather,
)
from serve_helpers import Running, running_server

WEATHER = {"name": "get_weather", "description": "The weather in a city.",
           "input_schema": {"type": "object", "properties": {"city": {"type": "string"}},
                            "required": ["city"]}}  # fmt: skip
THINKING: Any = {"type": "enabled", "budget_tokens": 2048}


def client_of(served: Running, **key: Any) -> anthropic.Anthropic:
    """A client of the server: its base URL without /v1, as the SDK adds it."""
    base = served.url.removesuffix("/v1")
    return anthropic.Anthropic(
        base_url=base, max_retries=0, timeout=60, **(key or {"api_key": "unused"})
    )


@pytest.fixture
def client(served: Running) -> anthropic.Anthropic:
    return client_of(served)


def hi() -> list[Any]:
    return [{"role": "user", "content": HI}]


def test_a_message_answers_and_keeps_its_thinking_apart(client: anthropic.Anthropic) -> None:
    plain = client.messages.create(model="gpt-oss-tiny", max_tokens=200, messages=hi())
    assert [b.type for b in plain.content] == ["text"] and plain.content[0].text == ANSWER
    assert plain.stop_reason == "end_turn" and plain.id.startswith("msg_")
    thought = client.messages.create(model="gpt-oss-tiny", max_tokens=200, messages=hi(),
                                     thinking=THINKING)  # fmt: skip
    thinking, text = thought.content
    assert thinking.type == "thinking" and thinking.thinking == REASONING and thinking.signature
    assert text.type == "text" and text.text == ANSWER
    usage = thought.usage
    assert usage.output_tokens > 0
    assert usage.input_tokens + (usage.cache_read_input_tokens or 0) > 0


def test_the_stream_helpers_give_the_text_and_the_final_message(
    client: anthropic.Anthropic,
) -> None:
    with client.messages.stream(model="tiny", max_tokens=200, messages=hi(),
                                thinking=THINKING) as stream:  # fmt: skip
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text == ANSWER
    assert [b.type for b in final.content] == ["thinking", "text"]
    assert final.content[0].thinking == REASONING and final.content[0].signature  # type: ignore[union-attr]
    assert final.stop_reason == "end_turn" and final.usage.output_tokens > 0


@pytest.mark.parametrize("streamed", [False, True], ids=["create", "stream"])
def test_a_tool_round_trip_carries_the_thinking_back(
    client: anthropic.Anthropic, served: Running, streamed: bool
) -> None:
    """The reply calls get_weather; the client runs it and sends the assistant's content back
    unchanged, its thinking block included, which the model gets as its reasoning again."""
    messages: list[Any] = [{"role": "user", "content": QUESTION}]
    ask: dict[str, Any] = {"model": "gpt-oss-tiny", "max_tokens": 300, "tools": [WEATHER]}
    if streamed:
        with client.messages.stream(messages=messages, **ask) as stream:
            first = stream.get_final_message()
    else:
        first = client.messages.create(messages=messages, **ask)
    assert first.stop_reason == "tool_use"
    call = next(b for b in first.content if b.type == "tool_use")
    assert call.name == "get_weather" and call.input == {"city": "Tokyo"}
    result = get_weather(**call.input)  # type: ignore[arg-type]
    messages += [{"role": "assistant", "content": first.content},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id,
                                               "content": result}]}]  # fmt: skip
    second = client.messages.create(messages=messages, **ask)
    assert second.stop_reason == "end_turn" and second.content[-1].text == ANSWER  # type: ignore[union-attr]
    assert_round_trip(served, CALL_REASONING)


def test_a_stop_sequence_ends_the_answer(client: anthropic.Anthropic) -> None:
    done = client.messages.create(model="gpt-oss-tiny", max_tokens=200, messages=hi(),
                                  stop_sequences=["there", "zz"])  # fmt: skip
    assert done.content[0].text == "Hello "  # type: ignore[union-attr]
    assert (done.stop_reason, done.stop_sequence) == ("stop_sequence", "there")


def test_count_tokens_counts_the_prompt_the_model_reads(
    client: anthropic.Anthropic, served: Running
) -> None:
    question = [{"role": "user", "content": QUESTION}]
    ask: dict[str, Any] = {"model": "gpt-oss-tiny", "messages": question, "system": "Be brief.",
                           "tools": [WEATHER]}  # fmt: skip
    counted = client.messages.count_tokens(**ask).input_tokens
    client.messages.create(max_tokens=300, **ask)
    assert counted == served.seen.stats[-1].prompt_tokens > 0


def test_errors_are_the_sdks_own(client: anthropic.Anthropic) -> None:
    with pytest.raises(anthropic.NotFoundError, match="does not exist here"):
        client.messages.create(model="claude-sonnet-4-5", max_tokens=10, messages=hi())
    with pytest.raises(anthropic.NotFoundError, match="does not exist here"):
        client.messages.count_tokens(model="claude-sonnet-4-5", messages=hi())
    with pytest.raises(anthropic.BadRequestError, match="mcp_servers") as caught:
        client.messages.create(model="gpt-oss-tiny", max_tokens=10, messages=hi(),
                               extra_body={"mcp_servers": []})  # fmt: skip
    assert caught.value.body["error"]["type"] == "invalid_request_error"  # type: ignore[index]
    too_long = [{"role": "user", "content": "word " * 3000}]  # past the 2,048-token context
    with pytest.raises(anthropic.BadRequestError, match="context"):
        client.messages.create(model="tiny", max_tokens=10, messages=too_long)  # type: ignore[arg-type]
    with pytest.raises(anthropic.BadRequestError, match="max_tokens is required"):
        client.post("/v1/messages", cast_to=object, body={"model": "tiny", "messages": hi()})
    # the model fails once the stream has begun: an error event, which the SDK raises
    failing = [{"role": "user", "content": "fail"}]
    stream = client.messages.stream(model="tiny", max_tokens=50, messages=failing)  # type: ignore[arg-type]
    with pytest.raises(anthropic.APIStatusError, match="llama_decode failed"), stream as events:
        events.get_final_message()


@pytest.fixture(scope="module")
def keyed(tiny_gguf: Path) -> Iterator[Running]:
    with running_server(tiny_gguf, api_key="sesame") as running:
        yield running


def test_the_key_comes_as_x_api_key(keyed: Running) -> None:
    done = client_of(keyed, api_key="sesame").messages.create(
        model="gpt-oss-tiny", max_tokens=200, messages=hi())  # fmt: skip
    assert done.content[0].text == ANSWER  # type: ignore[union-attr]
    bearer = client_of(keyed, auth_token="sesame")  # ANTHROPIC_AUTH_TOKEN's way
    assert bearer.messages.count_tokens(model="tiny", messages=hi()).input_tokens > 0
    with pytest.raises(anthropic.AuthenticationError) as caught:
        client_of(keyed, api_key="wrong").messages.create(model="tiny", max_tokens=5, messages=hi())
    assert caught.value.body["error"]["type"] == "authentication_error"  # type: ignore[index]
