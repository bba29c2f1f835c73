"""Ollama's dialect without a model: its requests read (options refused by name, `keep_alive`,
`think`, `format`, the conversation), its errors' shape, its NDJSON lines, and the names a
model list shows."""

from __future__ import annotations

import json
from typing import Any

import pytest
from read_helpers import NAMES, SCHEMA, WEATHER, PlainEngine

from gptoss_local.backends.base import GenerationSettings
from gptoss_local.backends.openai.backend import choose_model, models_apart
from gptoss_local.serve.api_request import ApiRequest
from gptoss_local.serve.apis import ROUTES, error_body
from gptoss_local.serve.errors import ApiError
from gptoss_local.serve.limits import Limits
from gptoss_local.serve.model_names import listed
from gptoss_local.serve.ollama import options, reply
from gptoss_local.serve.ollama.request import ChatReader, GenerateReader
from gptoss_local.serve.service import Service

HI = [{"role": "user", "content": "hi"}]


def chat(**fields: Any) -> ApiRequest:
    body = {"model": "gpt-oss:20b", "messages": HI, **fields}
    return ChatReader().read(body, NAMES, GenerationSettings(), Limits(4096))


def refused(**fields: Any) -> ApiError:
    with pytest.raises(ApiError) as caught:
        chat(**fields)
    assert caught.value.status == 400
    return caught.value


def test_stream_is_the_default_and_options_map_to_the_settings() -> None:
    assert chat().stream and not chat(stream=False).stream
    asked = chat(options={"num_predict": 64, "temperature": 0.5, "top_p": 0.9, "top_k": 20,
                          "min_p": 0.1, "seed": 7, "stop": ["END"], "presence_penalty": 0.5,
                          "num_ctx": 4096, "num_gpu": 99, "num_thread": 8})  # fmt: skip
    s = asked.request.settings
    assert (s.max_tokens, s.temperature, s.top_p, s.top_k, s.min_p, s.seed) == (
        64, 0.5, 0.9, 20, 0.1, 7)  # fmt: skip
    assert s.presence_penalty == 0.5 and asked.stops == ("END",)
    assert chat(options={"num_predict": -1}).request.settings.max_tokens is None


@pytest.mark.parametrize("option", ["mirostat", "repeat_penalty", "typical_p", "penalize_newline",
                                    "repeat_last_n", "tfs_z"])  # fmt: skip
def test_unsupported_options_are_refused_by_name(option: str) -> None:
    error = refused(options={option: 2})
    assert option in error.message and error.param == f"options.{option}"


def test_switched_off_options_are_accepted() -> None:
    chat(options={"repeat_penalty": 1, "mirostat": 0, "typical_p": 1.0})


def test_a_context_over_the_servers_is_refused() -> None:
    assert "4096" in refused(options={"num_ctx": 8192}).message
    refused(options={"num_ctx": "big"})
    refused(options={"top_k": -1})
    refused(options={"num_predict": 0})
    refused(options="fast")


@pytest.mark.parametrize(("given", "seconds"), [
    (None, None), (0, 0.0), (300, 300.0), (2.5, 2.5), ("5m", 300.0), ("1h30m", 5400.0),
    ("300ms", 0.3), ("10s", 10.0), ("-1", -1.0), (-1, -1.0), ("-5m", -1.0), ("0", 0.0),
    ("1500us", 0.0015), ("forever", -1.0),  # serve --keep-alive's spelling too
])  # fmt: skip
def test_keep_alive(given: Any, seconds: float | None) -> None:
    assert chat(keep_alive=given).keep_alive == seconds


@pytest.mark.parametrize("given", ["soon", "5 minutes", "m", "", "1h30", True, [5], "nan"])
def test_bad_keep_alive_is_refused(given: Any) -> None:
    assert refused(keep_alive=given).param == "keep_alive"


def test_think_is_the_effort_and_a_switch_is_ignored() -> None:
    for effort in ("low", "medium", "high"):
        assert chat(think=effort).request.settings.effort == effort
    assert chat(think=True).request.settings.effort == "medium"
    assert chat(think=False).request.settings.effort == "medium"
    assert refused(think="max").param == "think"


def test_format_json_or_a_schema() -> None:
    assert chat().request.response_format is None
    json_mode = chat(format="json").request.response_format
    assert json_mode is not None and json_mode.schema is None
    schema = chat(format=SCHEMA).request.response_format
    assert schema is not None and schema.schema == SCHEMA
    assert refused(format="yaml").param == "format"
    assert refused(format={"type": "nonsense"}).param == "format"


def test_a_tool_chain_comes_back_with_its_thinking() -> None:
    call = {"function": {"name": "get_weather", "arguments": {"city": "Tokyo"}}}
    messages = [{"role": "system", "content": "Be brief."}, *HI,
                {"role": "assistant", "content": "", "thinking": "Need it",
                 "tool_calls": [call]},
                {"role": "tool", "content": "sunny", "tool_name": "get_weather"}]  # fmt: skip
    conversation = chat(messages=messages, tools=[WEATHER]).request.conversation
    assert conversation.instructions == "Be brief."
    _user, assistant, result = conversation.messages
    assert assistant.reasoning == "Need it"
    assert json.loads(str(assistant.tool_calls[0].arguments)) == {"city": "Tokyo"}
    assert (result.role, result.tool_name, result.content) == ("tool", "get_weather", "sunny")
    # Without tool_name (LangChain sends only an id the client dropped): the call pending.
    del messages[-1]["tool_name"]
    tool = chat(messages=messages, tools=[WEATHER]).request.conversation.messages[-1]
    assert tool.tool_name == "get_weather"


def test_images_and_raw_prompts_are_refused() -> None:
    assert "text only" in refused(messages=[{**HI[0], "images": ["aGk="]}]).message
    read = GenerateReader().read
    with pytest.raises(ApiError) as caught:
        read({"model": "gpt-oss-20b", "prompt": "hi", "raw": True}, NAMES, GenerationSettings())
    assert caught.value.param == "raw"
    asked = read({"model": "gpt-oss-20b", "prompt": "hi", "system": "Be brief."}, NAMES,
                 GenerationSettings())  # fmt: skip
    assert asked.request.conversation.instructions == "Be brief." and asked.stream


def test_errors_are_spelled_as_ollama_spells_them() -> None:
    error = ApiError(400, "the option 'mirostat' is not supported", "invalid_value", "options")
    assert error_body("/api/chat", error) == {"error": "the option 'mirostat' is not supported"}
    assert "type" in error_body("/v1/chat/completions", error)["error"]
    assert reply.error_piece(error.body()) == {"error": error.message}
    line = reply.ndjson({"message": {"content": "héllo\n"}, "done": False})
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert json.loads(line) == {"message": {"content": "héllo\n"}, "done": False}
    assert ROUTES["/api/chat"].content_type == "application/x-ndjson"


def test_model_lists_show_the_names_a_user_types() -> None:
    assert listed(("gpt-oss-20b-mxfp4", "gpt-oss-20b")) == (
        "gpt-oss-20b-mxfp4", "gpt-oss:20b", "gpt-oss-20b")  # fmt: skip
    assert listed(("gpt-oss-tiny", "tiny")) == ("gpt-oss-tiny",)
    service = Service(PlainEngine(), NAMES, GenerationSettings())  # type: ignore[arg-type]
    ids = [m["id"] for m in service.get("/v1/models").body["data"]]  # type: ignore[index]
    assert ids == ["gpt-oss-20b-mxfp4", "gpt-oss:20b", "gpt-oss-20b"]
    one = service.get("/v1/models/gpt-oss:20b").body
    assert one is not None and one["id"] == "gpt-oss:20b"
    # gptoss-local's own client (`chat --backend openai`) still finds one model there.
    listing = service.get("/v1/models").body["data"]  # type: ignore[index]
    apart = [str(m["id"]) for m in models_apart(listing)]
    assert choose_model(apart, None, "u") == choose_model(apart, "20b", "u") == NAMES[0]
    tags = service.get("/api/tags").body
    assert tags is not None and [m["name"] for m in tags["models"]] == ids
    assert tags["models"][0]["details"]["family"] == "gpt-oss"


def test_keep_alive_seconds_parse_directly() -> None:
    assert options.keep_alive("1h1m1s") == 3661.0
