"""Claude Code's MCP tool names (``mcp__my-server__get_weather``) from the real client packages
against `serve` on the tiny model: the openai SDK (Chat Completions and Responses), the
anthropic SDK (Messages) and the ollama client (/api/chat) each offer the tool, get the
model's call back by that exact name, run it and send the call and its result back; the model
saw the tool as ``mcp__my_server__get_weather`` throughout."""

from __future__ import annotations

from typing import Any

import anthropic
import ollama
import openai
from compat_helpers import ANSWER, QUESTION, WEATHER_PARAMETERS, get_weather
from serve_helpers import Running

NAME = "mcp__my-server__get_weather"
SAFE = "mcp__my_server__get_weather"
MODEL = "gpt-oss-tiny"
FUNCTION = {"name": NAME, "description": "The weather in a city.", "parameters": WEATHER_PARAMETERS}


def assert_seen_safe(served: Running) -> None:
    """Both turns offered the tool by its safe name; the second read the call and its result
    by it too."""
    first, second = served.seen.conversations
    assert [t.name for t in first.tools] == [t.name for t in second.tools] == [SAFE]
    _, call, output = second.messages
    assert [c.name for c in call.tool_calls] == [SAFE]
    assert (output.tool_name, output.content) == (SAFE, "sunny in Tokyo")


def test_the_openai_sdk_chat_completions(served: Running) -> None:
    client = openai.OpenAI(base_url=served.url, api_key="unused", max_retries=0, timeout=60)
    messages: list[Any] = [{"role": "user", "content": QUESTION}]
    tools: Any = [{"type": "function", "function": FUNCTION}]
    first = client.chat.completions.create(model=MODEL, messages=messages, tools=tools)
    message = first.choices[0].message
    (call,) = message.tool_calls or []
    assert call.type == "function" and call.function.name == NAME
    result = get_weather(city="Tokyo")
    messages += [message.model_dump(exclude_none=True),
                 {"role": "tool", "tool_call_id": call.id, "content": result}]  # fmt: skip
    second = client.chat.completions.create(model=MODEL, messages=messages, tools=tools)
    assert second.choices[0].message.content == ANSWER
    assert_seen_safe(served)


def test_the_openai_sdk_responses(served: Running) -> None:
    client = openai.OpenAI(base_url=served.url, api_key="unused", max_retries=0, timeout=60)
    tools: Any = [{"type": "function", **FUNCTION}]
    items: list[Any] = [{"role": "user", "content": QUESTION}]
    first = client.responses.create(model=MODEL, input=items, tools=tools)
    (call,) = [item for item in first.output if item.type == "function_call"]
    assert call.name == NAME and [t.name for t in first.tools] == [NAME]  # type: ignore[union-attr]
    items += [call.model_dump(exclude_none=True),
              {"type": "function_call_output", "call_id": call.call_id,
               "output": get_weather(city="Tokyo")}]  # fmt: skip
    second = client.responses.create(model=MODEL, input=items, tools=tools)
    assert second.output_text == ANSWER
    assert_seen_safe(served)


def test_the_anthropic_sdk(served: Running) -> None:
    base = served.url.removesuffix("/v1")
    client = anthropic.Anthropic(base_url=base, api_key="unused", max_retries=0, timeout=60)
    tool: Any = {"name": NAME, "description": "The weather in a city.",
                 "input_schema": WEATHER_PARAMETERS}  # fmt: skip
    messages: list[Any] = [{"role": "user", "content": QUESTION}]
    first = client.messages.create(model=MODEL, max_tokens=300, messages=messages, tools=[tool])
    call = next(b for b in first.content if b.type == "tool_use")
    assert first.stop_reason == "tool_use" and call.name == NAME
    messages += [{"role": "assistant", "content": first.content},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id,
                                               "content": get_weather(city="Tokyo")}]}]  # fmt: skip
    second = client.messages.create(model=MODEL, max_tokens=300, messages=messages, tools=[tool])
    assert second.stop_reason == "end_turn" and second.content[-1].text == ANSWER  # type: ignore[union-attr]
    assert_seen_safe(served)


def test_the_ollama_client(served: Running) -> None:
    client = ollama.Client(host=f"http://127.0.0.1:{served.port}", timeout=60)
    tools: Any = [{"type": "function", "function": FUNCTION}]
    messages: list[Any] = [{"role": "user", "content": QUESTION}]
    first = client.chat(MODEL, messages=messages, tools=tools, stream=False)
    (call,) = first.message.tool_calls or []
    assert call.function.name == NAME and call.function.arguments == {"city": "Tokyo"}
    messages += [first.message, {"role": "tool", "tool_name": call.function.name,
                                 "content": get_weather(city="Tokyo")}]  # fmt: skip
    second = client.chat(MODEL, messages=messages, tools=tools, stream=False)
    assert second.message.content == ANSWER
    assert_seen_safe(served)
