"""LangChain's `ChatOpenAI` (langchain-openai) against `serve`, over Chat Completions and
`use_responses_api=True`: chat, streaming, a tool round trip, structured output and where the
reasoning shows.

Where the reasoning shows: ChatOpenAI reads only OpenAI's own fields, so over Chat Completions
`reasoning_content` is dropped (the module's docstring says so: provider fields are for
provider packages). Over Responses the reasoning item is a content block as sent (its
`content: [{type: reasoning_text}]`); LangChain's standard `content_blocks` take a reasoning
block's text from `summary` only, and a stream builds the block from `output_item.added` (empty)
and `response.reasoning_summary_text.delta`, ignoring `response.reasoning_text.delta`.
"""

from __future__ import annotations

from typing import Any

import pytest
from compat_helpers import (
    ANSWER,
    CALL_REASONING,
    HI,
    QUESTION,
    REASONING,
    STRUCTURED,
    City,
    assert_city_json,
    assert_city_schema_reached,
    assert_round_trip,
    get_weather,
    last_request,
)
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from serve_helpers import Running

APIS = pytest.mark.parametrize("responses", [False, True], ids=["chat-completions", "responses"])


def chat_model(served: Running, responses: bool) -> ChatOpenAI:
    return ChatOpenAI(model="gpt-oss-tiny", base_url=served.url, api_key="unused",
                      use_responses_api=responses, max_retries=0, timeout=60)  # fmt: skip


def reasoning_blocks(message: BaseMessage) -> list[dict[str, Any]]:
    content = message.content
    return [b for b in content if isinstance(b, dict) and b["type"] == "reasoning"]


@APIS
def test_chat(served: Running, responses: bool) -> None:
    message = chat_model(served, responses).invoke(HI)
    assert message.text == ANSWER


@APIS
def test_streaming(served: Running, responses: bool) -> None:
    chunks = list(chat_model(served, responses).stream(HI))
    assert len(chunks) > 2  # streamed, not one piece
    whole = sum(chunks[1:], chunks[0])
    assert isinstance(whole, AIMessageChunk) and whole.text == ANSWER


@APIS
def test_a_tool_round_trip(served: Running, responses: bool) -> None:
    weather = tool(get_weather)
    model = chat_model(served, responses).bind_tools([weather])
    messages: list[BaseMessage] = [HumanMessage(QUESTION)]
    call = model.invoke(messages)
    assert isinstance(call, AIMessage) and call.text == ""
    assert [(c["name"], c["args"]) for c in call.tool_calls] == [("get_weather", {"city": "Tokyo"})]
    messages += [call, weather.invoke(call.tool_calls[0])]
    assert model.invoke(messages).text == ANSWER
    # Over Responses the reasoning item goes back with the call; Chat Completions drops it.
    assert_round_trip(served, CALL_REASONING if responses else "")


@APIS
def test_structured_output_as_a_json_schema(served: Running, responses: bool) -> None:
    structured = chat_model(served, responses).with_structured_output(City, include_raw=True)
    result: Any = structured.invoke(STRUCTURED)
    assert result["parsing_error"] is None and isinstance(result["parsed"], City)
    assert_city_json(result["raw"].text)
    assert_city_schema_reached(served)


@APIS
def test_structured_output_through_a_forced_tool_call(served: Running, responses: bool) -> None:
    model = chat_model(served, responses)
    structured = model.with_structured_output(City, method="function_calling", include_raw=True)
    result: Any = structured.invoke(STRUCTURED)
    assert result["parsing_error"] is None and isinstance(result["parsed"], City)
    assert [c["name"] for c in result["raw"].tool_calls] == ["City"]
    choice = last_request(served).tool_choice
    assert choice.name == "City"  # LangChain forces the call by name


def test_chat_completions_reasoning_is_dropped(served: Running) -> None:
    message = chat_model(served, responses=False).invoke(HI)
    assert message.content == ANSWER  # a plain string: no reasoning block, none leaked
    assert "reasoning_content" not in message.additional_kwargs
    assert [b["type"] for b in message.content_blocks] == ["text"]


def test_responses_reasoning_is_a_content_block(served: Running) -> None:
    message = chat_model(served, responses=True).invoke(HI)
    (block,) = reasoning_blocks(message)
    assert block["content"] == [{"type": "reasoning_text", "text": REASONING}]
    assert block["summary"] == []
    # The standard view reads `summary` only: the text is left in the block's extras.
    (standard,) = [b for b in message.content_blocks if b["type"] == "reasoning"]
    assert "reasoning" not in standard
    assert standard["extras"]["content"] == block["content"]


def test_streamed_responses_reasoning_loses_its_text(served: Running) -> None:
    chunks = list(chat_model(served, responses=True).stream(HI))
    whole = sum(chunks[1:], chunks[0])
    (block,) = reasoning_blocks(whole)
    # From `output_item.added`; the `response.reasoning_text.delta` events are not read.
    assert (block["content"], block["summary"]) == ([], [])
    assert whole.text == ANSWER
