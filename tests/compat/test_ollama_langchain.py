"""LangChain's `ChatOllama` (langchain-ollama 1.1.0) against `serve`'s Ollama API: invoke,
stream, a tool round trip (the call's reasoning goes back as `thinking`), structured output as
a JSON schema, and where the reasoning shows (`reasoning_content` with `reasoning` set; never
in the content)."""

from __future__ import annotations

from typing import Any

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
)
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage
from langchain_core.tools import tool
from langchain_ollama import ChatOllama
from serve_helpers import Running


def chat_model(served: Running, **kwargs: Any) -> ChatOllama:
    return ChatOllama(model="gpt-oss-tiny", base_url=f"http://127.0.0.1:{served.port}",
                      client_kwargs={"timeout": 60}, **kwargs)  # fmt: skip


def test_invoke_leaves_the_reasoning_out_of_the_content(served: Running) -> None:
    message = chat_model(served).invoke(HI)
    assert message.content == ANSWER
    assert "reasoning_content" not in message.additional_kwargs


def test_reasoning_as_an_effort(served: Running) -> None:
    message = chat_model(served, reasoning="high").invoke(HI)
    assert message.content == ANSWER
    assert message.additional_kwargs["reasoning_content"] == REASONING
    assert served.seen.settings[-1].effort == "high"


def test_streaming(served: Running) -> None:
    chunks = list(chat_model(served, reasoning=True).stream(HI))
    assert len(chunks) > 2  # streamed, not one piece
    whole = sum(chunks[1:], chunks[0])
    assert isinstance(whole, AIMessageChunk) and whole.content == ANSWER
    assert whole.additional_kwargs["reasoning_content"] == REASONING
    assert whole.usage_metadata is not None and whole.usage_metadata["output_tokens"] > 0


def test_a_tool_round_trip(served: Running) -> None:
    weather = tool(get_weather)
    model = chat_model(served, reasoning=True).bind_tools([weather])
    messages: list[BaseMessage] = [HumanMessage(QUESTION)]
    call = model.invoke(messages)
    assert isinstance(call, AIMessage) and call.content == ""
    assert [(c["name"], c["args"]) for c in call.tool_calls] == [("get_weather", {"city": "Tokyo"})]
    messages += [call, weather.invoke(call.tool_calls[0])]  # the result names the call by id
    assert model.invoke(messages).content == ANSWER
    assert_round_trip(served, CALL_REASONING)


def test_structured_output_as_a_json_schema(served: Running) -> None:
    structured = chat_model(served).with_structured_output(City, include_raw=True)
    result: Any = structured.invoke(STRUCTURED)
    assert result["parsing_error"] is None and isinstance(result["parsed"], City)
    assert_city_json(result["raw"].content)
    assert_city_schema_reached(served)
