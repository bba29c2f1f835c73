"""`gptoss-local serve` through the official `openai` client, on the tiny model: both APIs,
streamed and not, reasoning apart from the answer, tools, usage, stop, max tokens, seed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest
from serve_helpers import Running, running_server

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather in a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


@pytest.fixture(scope="module", params=[1, 2], ids=["one-sequence", "two-sequences"])
def served(tiny_gguf: Path, request: pytest.FixtureRequest) -> Iterator[Running]:
    """The server with one sequence (a queue), and with two decoded together."""
    with running_server(tiny_gguf, sequences=request.param) as running:
        yield running


@pytest.fixture
def client(served: Running) -> openai.OpenAI:
    return openai.OpenAI(base_url=served.url, api_key="unused", max_retries=0, timeout=60)


def hi() -> list[dict]:
    return [{"role": "user", "content": "hi"}]


def test_the_model_is_listed_with_its_context(client: openai.OpenAI) -> None:
    models = client.models.list().data
    assert [m.id for m in models] == ["gpt-oss-tiny"]
    assert models[0].model_extra == {"max_model_len": 2048}
    assert client.models.retrieve("gpt-oss-tiny").id == "gpt-oss-tiny"


def test_a_chat_completion_keeps_reasoning_apart(client: openai.OpenAI) -> None:
    done = client.chat.completions.create(model="gpt-oss-tiny", messages=hi(), seed=1)
    message = done.choices[0].message
    assert message.content == "Hello there"
    assert message.model_extra["reasoning_content"] == "The user says hi"
    assert done.choices[0].finish_reason == "stop"
    usage = done.usage
    assert usage is not None and usage.prompt_tokens > 0 and usage.completion_tokens > 0
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens


def test_a_streamed_chat_completion_with_usage(client: openai.OpenAI) -> None:
    chunks = list(
        client.chat.completions.create(
            model="tiny", messages=hi(), stream=True, stream_options={"include_usage": True}
        )
    )
    deltas = [c.choices[0].delta for c in chunks if c.choices]
    reasoning = "".join((d.model_extra or {}).get("reasoning_content") or "" for d in deltas)
    assert reasoning == "The user says hi"
    assert "".join(d.content or "" for d in deltas) == "Hello there"
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert chunks[-1].usage.completion_tokens > 0


def test_the_effort_reaches_the_model(client: openai.OpenAI, served: Running) -> None:
    client.chat.completions.create(model="tiny", messages=hi(), reasoning_effort="high")
    assert served.seen.settings[-1].effort == "high"
    client.responses.create(model="tiny", input="hi", reasoning={"effort": "low"})
    assert served.seen.settings[-1].effort == "low"
    # Thinking turned off in an app (oterm sends "none"): gpt-oss's least, as Ollama serves it.
    client.chat.completions.create(model="tiny", messages=hi(), reasoning_effort="none")
    assert served.seen.settings[-1].effort == "low"
    client.responses.create(model="tiny", input="hi", reasoning={"effort": "xhigh"})
    assert served.seen.settings[-1].effort == "high"
    # The chat template's knobs, as apps made for llama-server send them.
    template = {"chat_template_kwargs": {"reasoning_effort": "high"}}
    client.chat.completions.create(model="tiny", messages=hi(), extra_body=template)
    assert served.seen.settings[-1].effort == "high"
    template = {"chat_template_kwargs": {"enable_thinking": False}}
    client.chat.completions.create(model="tiny", messages=hi(), extra_body=template)
    assert served.seen.settings[-1].effort == "low"
    with pytest.raises(openai.BadRequestError, match="must be one of low, medium, high"):
        client.chat.completions.create(model="tiny", messages=hi(), reasoning_effort="huge")  # type: ignore[arg-type]


def test_system_and_developer_messages_are_the_instructions(
    client: openai.OpenAI, served: Running
) -> None:
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "developer", "content": "Answer in French."},
        *hi(),
    ]
    client.chat.completions.create(model="tiny", messages=messages)
    assert served.seen.conversations[-1].instructions == "Be brief.\n\nAnswer in French."


def test_stop_max_tokens_and_seed(client: openai.OpenAI) -> None:
    stopped = client.chat.completions.create(model="tiny", messages=hi(), stop=["ere"])
    assert stopped.choices[0].message.content == "Hello th"
    assert stopped.choices[0].finish_reason == "stop"
    cut = client.chat.completions.create(model="tiny", messages=hi(), max_completion_tokens=3)
    assert cut.choices[0].finish_reason == "length" and cut.usage.completion_tokens == 3
    free = [{"role": "user", "content": "free text"}]

    def sample(seed: int) -> str:
        done = client.chat.completions.create(
            model="tiny", messages=free, seed=seed, max_tokens=24, temperature=1.0
        )
        message = done.choices[0].message
        return (message.model_extra.get("reasoning_content") or "") + (message.content or "")

    assert sample(7) == sample(7)
    assert len({sample(7), sample(8), sample(9)}) > 1


def test_a_tool_call_round_trip_in_chat_completions(client: openai.OpenAI, served: Running) -> None:
    messages = [{"role": "user", "content": "weather in Tokyo?"}]
    first = client.chat.completions.create(model="tiny", messages=messages, tools=TOOLS)
    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.tool_calls
    call = choice.message.tool_calls[0]
    assert call.function.name == "get_weather"
    assert json.loads(call.function.arguments) == {"city": "Tokyo"}
    assert choice.message.model_extra["reasoning_content"] == "Need the weather"
    messages += [
        choice.message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": '{"sky": "clear"}'},
    ]
    second = client.chat.completions.create(model="tiny", messages=messages, tools=TOOLS)
    assert second.choices[0].message.content == "Hello there"
    sent = served.seen.conversations[-1]
    assert sent.messages[-1].role == "tool" and sent.messages[-1].tool_name == "get_weather"
    assert sent.messages[-2].reasoning == "Need the weather"  # the chain keeps its reasoning


def test_a_streamed_tool_call(client: openai.OpenAI) -> None:
    chunks = list(
        client.chat.completions.create(
            model="tiny", messages=[{"role": "user", "content": "weather?"}], tools=TOOLS,
            stream=True,
        )
    )  # fmt: skip
    calls = [t for c in chunks if c.choices for t in c.choices[0].delta.tool_calls or ()]
    assert [(t.index, t.function.name) for t in calls] == [(0, "get_weather")]
    assert json.loads(calls[0].function.arguments) == {"city": "Tokyo"}
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


def test_a_response_has_reasoning_and_message_items(client: openai.OpenAI) -> None:
    response = client.responses.create(model="tiny", input="hi", max_output_tokens=64)
    kinds = [item.type for item in response.output]
    assert kinds == ["reasoning", "message"]
    assert response.output[0].content[0].text == "The user says hi"
    assert response.output_text == "Hello there" and response.status == "completed"
    assert response.usage.input_tokens > 0 and response.usage.output_tokens > 0


def test_a_streamed_response(client: openai.OpenAI) -> None:
    events = list(client.responses.create(model="tiny", input="hi", stream=True))
    types = [e.type for e in events]
    assert types[:2] == ["response.created", "response.in_progress"]
    assert types[-1] == "response.completed"
    reasoning = "".join(e.delta for e in events if e.type == "response.reasoning_text.delta")
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert (reasoning, text) == ("The user says hi", "Hello there")
    assert [e.sequence_number for e in events] == list(range(len(events)))
    with client.responses.stream(model="tiny", input="hi") as stream:
        final = stream.get_final_response()
    assert final.output_text == "Hello there"


def test_a_tool_call_round_trip_in_responses(client: openai.OpenAI, served: Running) -> None:
    tools = [{"type": "function", **TOOLS[0]["function"]}]
    first = client.responses.create(model="tiny", input="weather in Tokyo?", tools=tools)
    assert [item.type for item in first.output] == ["reasoning", "function_call"]
    call = first.output[1]
    assert call.name == "get_weather" and json.loads(call.arguments) == {"city": "Tokyo"}
    follow = [
        {"role": "user", "content": "weather in Tokyo?"},
        *[item.model_dump(exclude_none=True) for item in first.output],
        {"type": "function_call_output", "call_id": call.call_id, "output": '{"sky": "clear"}'},
    ]
    second = client.responses.create(model="tiny", input=follow, tools=tools)
    assert second.output_text == "Hello there"
    sent = served.seen.conversations[-1].messages
    assert [m.role for m in sent] == ["user", "assistant", "tool"]
    assert sent[1].reasoning == "Need the weather" and sent[1].tool_calls[0].name == "get_weather"
    assert sent[2].tool_name == "get_weather"


def test_a_failure_before_any_output_is_an_http_error(client: openai.OpenAI) -> None:
    long = [{"role": "user", "content": "word " * 3000}]  # more than the 2,048-token context
    with pytest.raises(openai.BadRequestError) as full:
        client.chat.completions.create(model="tiny", messages=long)
    assert full.value.code == "context_length_exceeded"
    with pytest.raises(openai.BadRequestError, match="context"):
        client.responses.create(model="tiny", input="word " * 3000, stream=True)


def test_a_failure_mid_stream_ends_the_stream_with_an_error(client: openai.OpenAI) -> None:
    failing = [{"role": "user", "content": "fail now"}]
    with pytest.raises(openai.APIError, match="llama_decode failed"):
        list(client.chat.completions.create(model="tiny", messages=failing, stream=True))
    with pytest.raises(openai.APIError, match="llama_decode failed"):
        list(client.responses.create(model="tiny", input="fail now", stream=True))
    # The failure freed the model: the next request is answered.
    done = client.chat.completions.create(model="tiny", messages=hi())
    assert done.choices[0].message.content == "Hello there"
