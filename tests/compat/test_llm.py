"""Simon Willison's `llm` (its Python API) against `serve`: two models of its
`extra-openai-models.yaml`, one over Chat Completions and one with `responses: true`: chat,
streaming, a tool chain, a schema and where the reasoning shows.

Where the reasoning shows: a `ReasoningPart` in the response's messages, and stream events of
type "reasoning". Over Responses (`reasoning: true`, which also asks for a summary and for
`reasoning.encrypted_content`) its text is the item's `summary` and `content` texts joined
(events `response.reasoning_summary_text.delta` and `response.reasoning_text.delta` alike), and
the item goes back to the next request. Over Chat Completions `reasoning_content` is not read: a
reply whose usage counts reasoning tokens gets an empty `ReasoningPart(redacted=True)`, the
mark of reasoning the provider withheld.
"""

from __future__ import annotations

import json
from pathlib import Path

import llm
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
)
from llm.parts import ReasoningPart, TextPart
from serve_helpers import Running

MODELS = pytest.mark.parametrize("model_id", ["tiny-chat", "tiny-responses"])


@pytest.fixture(autouse=True)
def configured(served: Running, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """llm's home, with the server's model under two ids: one for each API."""
    common = {"model_name": "gpt-oss-tiny", "api_base": served.url,
              "supports_tools": True, "supports_schema": True}  # fmt: skip
    models = [
        {"model_id": "tiny-chat", **common},
        {"model_id": "tiny-responses", "responses": True, "reasoning": True, **common},
    ]
    (tmp_path / "extra-openai-models.yaml").write_text(json.dumps(models))  # JSON is YAML
    monkeypatch.setenv("LLM_USER_PATH", str(tmp_path))


def parts(response: llm.Response) -> list[object]:
    (message,) = response.messages()
    return list(message.parts)


@MODELS
def test_chat(model_id: str) -> None:
    assert llm.get_model(model_id).prompt(HI, stream=False).text() == ANSWER


@MODELS
def test_streaming(model_id: str) -> None:
    response = llm.get_model(model_id).prompt(HI)
    chunks = list(response)
    assert "".join(chunks) == ANSWER and len(chunks) > 1


@MODELS
def test_a_tool_chain(model_id: str, served: Running) -> None:
    chain = llm.get_model(model_id).chain(QUESTION, tools=[get_weather])
    call, answer = chain.responses()  # each time it is read, the chain runs again
    assert [(c.name, c.arguments) for c in call.tool_calls()] == [
        ("get_weather", {"city": "Tokyo"})
    ]
    assert (call.text(), answer.text(), answer.tool_calls()) == ("", ANSWER, [])
    # The Responses model sends the reasoning item back with the call; Chat Completions has none
    assert_round_trip(served, CALL_REASONING if model_id == "tiny-responses" else "")


@MODELS
def test_a_schema(model_id: str, served: Running) -> None:
    response = llm.get_model(model_id).prompt(STRUCTURED, schema=City, stream=False)
    assert_city_json(response.text())
    assert_city_schema_reached(served)


def test_chat_completions_reasoning_is_marked_withheld() -> None:
    response = llm.get_model("tiny-chat").prompt(HI, stream=False)
    assert parts(response) == [ReasoningPart(text="", redacted=True), TextPart(text=ANSWER)]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_responses_reasoning_is_a_reasoning_part(stream: bool) -> None:
    response = llm.get_model("tiny-responses").prompt(HI, stream=stream)
    events = list(response.stream_events())
    reasoning = "".join(e.chunk for e in events if e.type == "reasoning")
    assert reasoning == REASONING
    assert "".join(e.chunk for e in events if e.type == "text") == ANSWER
    first, text = parts(response)
    assert isinstance(first, ReasoningPart) and (first.text, first.redacted) == (REASONING, False)
    assert text == TextPart(text=ANSWER)
