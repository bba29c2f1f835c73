"""The `ollama` Python client (0.6.3) against `serve`'s Ollama API: the model list, show, ps,
chat whole and streamed with the thinking apart from the content, `think` as the effort, a tool
round trip with the call's thinking sent back, and `format` as "json" or a JSON schema. The
version is read over plain HTTP, as the client has no call for it."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import ollama
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
from serve_helpers import Running

MODEL = "gpt-oss-tiny"


def client(served: Running) -> ollama.Client:
    return ollama.Client(host=f"http://127.0.0.1:{served.port}", timeout=60)


def user(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text}]


def test_version_and_liveness_over_plain_http(served: Running) -> None:
    base = f"http://127.0.0.1:{served.port}"
    with urllib.request.urlopen(f"{base}/") as answer:
        assert answer.read().decode() == "Ollama is running"
    with urllib.request.urlopen(f"{base}/api/version") as answer:
        major, minor, _patch = map(int, json.load(answer)["version"].split("."))
    assert (major, minor) >= (0, 11)  # what gpt-oss's clients ask of an Ollama server


def test_list_show_and_ps(served: Running) -> None:
    listed = client(served).list()
    # The tiny model has no gpt-oss size, so its id is its only listed name.
    assert [m.model for m in listed.models] == [MODEL]
    (entry,) = listed.models
    assert entry.details is not None and entry.details.format == "gguf"
    assert entry.size and entry.size > 0 and entry.digest
    shown = client(served).show(MODEL)
    assert shown.capabilities == ["completion", "tools", "thinking"]
    assert shown.modelinfo is not None
    assert shown.modelinfo[f"{shown.modelinfo['general.architecture']}.context_length"] == 2048
    # VS Code's Ollama provider names the model by its basename (the tiny file has none).
    assert shown.modelinfo["general.basename"] == MODEL
    (loaded,) = client(served).ps().models
    assert loaded.model == MODEL and loaded.size == entry.size


def test_chat_keeps_the_thinking_apart(served: Running) -> None:
    reply = client(served).chat(MODEL, messages=user(HI), stream=False)
    assert reply.message.content == ANSWER
    assert reply.message.thinking == REASONING
    assert reply.done and reply.done_reason == "stop"
    assert reply.eval_count and reply.prompt_eval_count


def test_streamed_chat(served: Running) -> None:
    parts = list(client(served).chat(MODEL, messages=user(HI), stream=True))
    assert len(parts) > 2 and parts[-1].done and not any(p.done for p in parts[:-1])
    assert "".join(p.message.content or "" for p in parts) == ANSWER
    assert "".join(p.message.thinking or "" for p in parts) == REASONING


def test_think_sets_the_effort(served: Running) -> None:
    for think in ("low", "high"):
        reply = client(served).chat(MODEL, messages=user(HI), think=think, stream=False)
        assert reply.message.content == ANSWER
        assert served.seen.settings[-1].effort == think
    client(served).chat(MODEL, messages=user(HI), think=True, stream=False)
    assert served.seen.settings[-1].effort == "medium"  # gpt-oss takes no switch: the default


def test_a_tool_round_trip(served: Running) -> None:
    messages: list[Any] = user(QUESTION)
    call = client(served).chat(MODEL, messages=messages, tools=[get_weather], stream=False)
    (made,) = call.message.tool_calls or []
    assert (made.function.name, dict(made.function.arguments)) == ("get_weather", {"city": "Tokyo"})
    assert call.message.thinking == CALL_REASONING and not call.message.content
    messages += [call.message, {"role": "tool", "tool_name": "get_weather",
                                "content": get_weather(**made.function.arguments)}]  # fmt: skip
    answer = client(served).chat(MODEL, messages=messages, tools=[get_weather], stream=False)
    assert answer.message.content == ANSWER
    assert_round_trip(served, CALL_REASONING)


def test_format_json_and_a_schema(served: Running) -> None:
    reply = client(served).chat(MODEL, messages=user(STRUCTURED), format="json", stream=False)
    assert isinstance(json.loads(reply.message.content or ""), dict)
    response_format = last_request(served).response_format
    assert response_format is not None and response_format.schema is None
    schema = City.model_json_schema()
    reply = client(served).chat(MODEL, messages=user(STRUCTURED), format=schema, stream=False)
    assert_city_json(reply.message.content or "")
    assert_city_schema_reached(served)


def test_an_unknown_model_and_a_refused_option(served: Running) -> None:
    for asked, kwargs, status in (("gpt-4o", {}, 404),
                                  (MODEL, {"options": {"mirostat": 2}}, 400)):  # fmt: skip
        try:
            client(served).chat(asked, messages=user(HI), stream=False, **kwargs)
        except ollama.ResponseError as exc:
            assert exc.status_code == status
            assert (asked if status == 404 else "mirostat") in exc.error
        else:
            raise AssertionError("no error")


def test_pull_of_the_served_model_succeeds_and_of_another_is_refused(served: Running) -> None:
    assert [p.status for p in client(served).pull(MODEL, stream=True)] == ["success"]
    assert client(served).pull(MODEL, stream=False).status == "success"
    try:
        list(client(served).pull("llama3.2", stream=True))  # raises as it is read
    except ollama.ResponseError as exc:
        assert exc.status_code == 400 and "gptoss-local pull" in exc.error
    else:
        raise AssertionError("another model was pulled")
