"""Tool choices in both APIs' spellings, penalties and logit biases, what the engine cannot
hold named as each API names the field, the loaded model's names, and the context error's
words for an API client."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from read_helpers import DEFAULTS, HI, NAMES, TIME, WEATHER, PlainEngine, chat, refused, responses

from gptoss_local.backends.base import BackendError, BackendInfo, Reply, ReplyRequest, ToolChoice
from gptoss_local.serve.errors import ApiError
from gptoss_local.serve.model_names import accepts
from gptoss_local.serve.service import Service

# -- tool choice -----------------------------------------------------------------------------


def test_tool_choices_in_either_spelling() -> None:
    tools, flat = [WEATHER, TIME], [{"type": "function", **t["function"]} for t in [WEATHER, TIME]]
    assert chat(tools=tools, tool_choice="required").tool_choice == ToolChoice(required=True)
    named = {"type": "function", "function": {"name": "get_time"}}
    assert chat(tools=tools, tool_choice=named).tool_choice == ToolChoice(name="get_time")
    assert responses(tools=flat, tool_choice={"type": "function", "name": "get_time"}) \
        .tool_choice == ToolChoice(name="get_time")  # fmt: skip
    assert chat(tools=tools, tool_choice="none").conversation.tools == ()
    assert chat(tools=tools, tool_choice="auto").tool_choice == ToolChoice()


def test_allowed_tools_narrow_what_is_offered() -> None:
    tools = [WEATHER, TIME]
    allowed = {"type": "allowed_tools", "allowed_tools": {"mode": "required", "tools": [
        {"type": "function", "function": {"name": "get_time"}}]}}  # fmt: skip
    request = chat(tools=tools, tool_choice=allowed)
    assert [t.name for t in request.conversation.tools] == ["get_time"]
    assert request.tool_choice == ToolChoice(required=True)


def test_a_tool_of_a_namespace_is_chosen_with_its_namespace() -> None:
    space = {"type": "namespace", "name": "helpers", "description": "Helpers.",
             "tools": [{"type": "function", "name": "get_time"}]}  # fmt: skip
    flat = {"type": "function", "name": "get_time"}
    both = [space, flat]
    choice = {"type": "function", "name": "get_time", "namespace": "helpers"}
    assert responses(tools=both, tool_choice=choice).tool_choice == ToolChoice(
        name="get_time", namespace="helpers"
    )
    ambiguous = refused(responses, tools=both, tool_choice={"type": "function", "name": "get_time"})
    assert "several namespaces" in ambiguous.message


@pytest.mark.parametrize(
    ("fields", "param"),
    [
        ({"tool_choice": "required"}, "tool_choice"),
        ({"tools": [WEATHER], "tool_choice": "always"}, "tool_choice"),
        ({"tools": [WEATHER], "tool_choice": {"type": "function", "function": {"name": "x"}}},
         "tool_choice"),
        ({"tools": [WEATHER], "tool_choice": {"type": "function", "function": {}}},
         "tool_choice.function.name"),
        ({"tools": [WEATHER], "tool_choice": {"type": "web_search_preview"}}, "tool_choice.type"),
        ({"tools": [WEATHER], "tool_choice": {"type": "allowed_tools",
                                              "allowed_tools": {"mode": "sometimes",
                                                                "tools": [WEATHER]}}},
         "tool_choice.allowed_tools.mode"),
        ({"tools": [WEATHER], "tool_choice": {"type": "allowed_tools",
                                              "allowed_tools": {"tools": []}}},
         "tool_choice.allowed_tools.tools"),
    ],
)  # fmt: skip
def test_tool_choices_that_cannot_be_honoured(fields: dict[str, Any], param: str) -> None:
    assert refused(chat, **fields).param == param


# -- penalties and biases --------------------------------------------------------------------


def test_penalties_and_biases_are_read() -> None:
    settings = chat(frequency_penalty=1.5, presence_penalty=-0.5,
                    logit_bias={"200": 100, "7": -3.5}).settings  # fmt: skip
    assert (settings.frequency_penalty, settings.presence_penalty) == (1.5, -0.5)
    assert settings.logit_bias == ((7, -3.5), (200, 100.0))
    assert chat().settings == DEFAULTS


@pytest.mark.parametrize(
    ("fields", "param"),
    [
        ({"frequency_penalty": 2.01}, "frequency_penalty"),
        ({"presence_penalty": -3}, "presence_penalty"),
        ({"presence_penalty": "1"}, "presence_penalty"),
        ({"logit_bias": {"7": 101}}, "logit_bias"),
        ({"logit_bias": {"7": True}}, "logit_bias"),
        ({"logit_bias": {"-7": 1}}, "logit_bias"),
        ({"logit_bias": {"seven": 1}}, "logit_bias"),
        ({"logit_bias": {"99999999999": 1}}, "logit_bias"),
        ({"logit_bias": [7, 1]}, "logit_bias"),
        ({"logit_bias": {str(n): 1 for n in range(1025)}}, "logit_bias"),
    ],
)
def test_bad_penalties_and_biases_name_the_field(fields: dict[str, Any], param: str) -> None:
    assert refused(chat, **fields).param == param


@pytest.mark.parametrize(
    ("path", "fields", "param"),
    [
        ("/v1/chat/completions", {"response_format": {"type": "json_object"}}, "response_format"),
        ("/v1/responses", {"text": {"format": {"type": "json_object"}}}, "text.format"),
        ("/v1/chat/completions", {"tools": [WEATHER], "tool_choice": "required"}, "tool_choice"),
        ("/v1/chat/completions", {"frequency_penalty": 1}, "frequency_penalty"),
        ("/v1/chat/completions", {"presence_penalty": 1}, "presence_penalty"),
        ("/v1/chat/completions", {"logit_bias": {"5": 1}}, "logit_bias"),
    ],
)
def test_what_the_engine_cannot_hold_is_a_400_naming_the_field(
    path: str, fields: dict[str, Any], param: str
) -> None:
    service = Service(PlainEngine(), NAMES, DEFAULTS)
    conversation = {"messages": HI} if "chat" in path else {"input": "hi"}
    with pytest.raises(ApiError) as caught:
        service.post(path, {"model": "20b", **conversation, **fields}, threading.Event())
    assert (caught.value.status, caught.value.param) == (400, param)
    assert service.scheduler.waiting == 0


# -- the model's names -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "asked",
    ["gpt-oss-20b-mxfp4", "gpt-oss-20b", "GPT-OSS-20B", "openai/gpt-oss-20b", "gpt-oss:20b",
     "20b", "gpt-oss", "ggml-org/gpt-oss-20b-GGUF", "gpt_oss_20b", "gpt-oss-20b-mxfp4.gguf"],
)  # fmt: skip
def test_spellings_of_the_loaded_model_are_accepted(asked: str) -> None:
    assert accepts(asked, NAMES)


@pytest.mark.parametrize("asked", ["gpt-oss-120b", "openai/gpt-oss-120b", "120b", "gpt-4o",
                                   "gpt-oss-200b", "llama3", "gpt-oss-20"])  # fmt: skip
def test_another_model_is_not(asked: str) -> None:
    assert not accepts(asked, NAMES)


def test_a_file_of_ones_own_keeps_its_exact_names() -> None:
    assert accepts("My-Model", ("my-model",)) and accepts("tiny", ("gpt-oss-tiny", "tiny"))
    assert not accepts("gpt-oss-20b", ("my-model",))
    assert not accepts("gpt-oss", ("gpt-oss-tiny",))


def test_the_service_takes_the_files_own_name_for_the_model() -> None:
    class Named(PlainEngine):
        def info(self) -> BackendInfo:
            return BackendInfo("plain", "Gpt Oss 20b", "CPU", 4096)

    service = Service(Named(), ("model",), DEFAULTS)
    assert service.names == ("model", "Gpt Oss 20b")
    assert service.get("/v1/models/openai/gpt-oss-20b").body["id"] == "model"
    with pytest.raises(ApiError) as missing:
        service.post("/v1/chat/completions", {"model": "gpt-oss-120b", "messages": HI},
                     threading.Event())  # fmt: skip
    assert missing.value.status == 404 and "'model'" in missing.value.message


# -- the context error -----------------------------------------------------------------------


class _Full(PlainEngine):
    def stream(self, request: ReplyRequest, cancel: threading.Event | None = None) -> Reply:
        raise BackendError("The conversation is 3,000 tokens or more, more than the "
                           "2,048-token context holds.", "Start a new chat, or load the model "
                           "with a larger --context.", kind="context_full")  # fmt: skip


@pytest.mark.parametrize(("path", "param"), [("/v1/chat/completions", "messages"),
                                             ("/v1/responses", "input")])  # fmt: skip
def test_the_context_error_speaks_to_api_clients(path: str, param: str) -> None:
    service = Service(_Full(), NAMES, DEFAULTS)
    body = {"model": "gpt-oss-20b", "messages": HI, "input": "hi"}
    with pytest.raises(ApiError) as caught:
        service.post(path, body, threading.Event())
    error = caught.value
    assert (error.status, error.code, error.param) == (400, "context_length_exceeded", param)
    assert error.message.startswith("The conversation is 3,000 tokens")
    assert "restart the server with a larger --context" in error.message
    assert "new chat" not in error.message and "load the model" not in error.message
