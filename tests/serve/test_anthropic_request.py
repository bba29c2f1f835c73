"""Reading Anthropic's Messages requests (`serve.anthropic`) without a model: blocks into the
conversation the Chat Completions path builds for the same history, signed thinking kept and
foreign thinking dropped, the fields mapped (thinking, tool_choice, stop_sequences, top_k) and
the ones the server cannot honour refused by name."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest
from read_helpers import DEFAULTS, NAMES

from gptoss_local.backends.base import Capabilities, ReplyRequest, ToolChoice
from gptoss_local.harmony import render_prompt
from gptoss_local.serve.anthropic import errors
from gptoss_local.serve.anthropic.count import count_tokens
from gptoss_local.serve.anthropic.request import MessagesReader, MessagesRequest
from gptoss_local.serve.anthropic.thinking import sign
from gptoss_local.serve.chat_request import ChatReader
from gptoss_local.serve.errors import ApiError
from gptoss_local.serve.limits import Limits

HI = [{"role": "user", "content": "hi"}]
CITY = {"type": "object", "properties": {"city": {"type": "string"}}}
WEATHER = {"name": "get_weather", "description": "The weather in a city.", "input_schema": CITY}
FOREIGN = "EqQBCkgIAxABGAIiQL3x+Anthropic's+own+opaque+signature+bytes=="


def read(**fields: Any) -> MessagesRequest:
    body = {"model": "gpt-oss-20b", "max_tokens": 100, "messages": HI, **fields}
    return MessagesReader().read(body, NAMES, DEFAULTS)


def refused(**fields: Any) -> ApiError:
    with pytest.raises(ApiError) as caught:
        read(**fields)
    assert caught.value.status == 400
    return caught.value


def prompt(request: ReplyRequest) -> str:
    c = request.conversation
    return render_prompt(list(c.messages), effort=request.settings.effort,
                         instructions=c.instructions, tools=c.tools)  # fmt: skip


THOUGHT = "Need the weather"


def test_blocks_render_the_prompt_the_chat_path_renders() -> None:
    """A tool chain in progress (the analysis kept, as Harmony keeps it) and a finished turn."""
    arguments = {"city": "Tokyo"}
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "Weather?",
                                      "cache_control": {"type": "ephemeral"}}]},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": THOUGHT, "signature": sign(THOUGHT)},
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": arguments}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                      "content": [{"type": "text", "text": "sunny"}]}]},
    ]  # fmt: skip
    chat = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": None, "reasoning_content": "Need the weather",
         "tool_calls": [{"id": "c1", "type": "function", "function": {
             "name": "get_weather", "arguments": json.dumps(arguments)}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    ]  # fmt: skip
    function = {"name": "get_weather", "description": WEATHER["description"], "parameters": CITY}
    tools = [{"type": "function", "function": function}]
    ours = read(messages=messages, system=[{"type": "text", "text": "Be brief."}], tools=[WEATHER])
    theirs = ChatReader().read({"model": "gpt-oss-20b", "messages": chat, "tools": tools},
                               NAMES, DEFAULTS)  # fmt: skip
    assert prompt(ours.request) == prompt(theirs.request)
    assert "Need the weather" in prompt(ours.request)
    # ... and once the turn has its answer, the finished turn's analysis is dropped alike
    done = [
        *messages,
        {"role": "assistant", "content": "Sunny."},
        {"role": "user", "content": "ok"},
    ]
    chat_done = [
        *chat,
        {"role": "assistant", "content": "Sunny."},
        {"role": "user", "content": "ok"},
    ]
    ours = read(messages=done, system="Be brief.", tools=[WEATHER])
    theirs = ChatReader().read({"model": "gpt-oss-20b", "messages": chat_done, "tools": tools},
                               NAMES, DEFAULTS)  # fmt: skip
    assert prompt(ours.request) == prompt(theirs.request)


def assistant_reasoning(*blocks: dict[str, Any]) -> str:
    messages = [*HI, {"role": "assistant", "content": [*blocks, {"type": "text", "text": "a"}]},
                {"role": "user", "content": "more"}]  # fmt: skip
    return read(messages=messages).request.conversation.messages[1].reasoning


def test_only_thinking_this_server_signed_comes_back() -> None:
    assert (
        assistant_reasoning({"type": "thinking", "thinking": "mine", "signature": sign("mine")})
        == "mine"
    )
    # display "omitted": the text left out, the signature still holds it
    assert (
        assistant_reasoning({"type": "thinking", "thinking": "", "signature": sign("kept")})
        == "kept"
    )
    assert (
        assistant_reasoning({"type": "thinking", "thinking": "claude's", "signature": FOREIGN})
        == ""
    )
    assert assistant_reasoning({"type": "thinking", "thinking": "unsigned"}) == ""
    assert assistant_reasoning({"type": "redacted_thinking", "data": "opaque"}) == ""


def test_tool_results_and_text_of_one_user_message_keep_their_order() -> None:
    messages = [*HI, {"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "get_weather", "input": {}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "rain", "is_error": True},
            {"type": "text", "text": "and now?"}]}]  # fmt: skip
    got = read(messages=messages, tools=[WEATHER]).request.conversation.messages
    assert [(m.role, m.content, m.tool_name) for m in got[2:]] == [
        ("tool", "rain", "get_weather"), ("user", "and now?", None)]  # fmt: skip


def test_system_messages_among_the_messages_are_instructions() -> None:
    messages = [*HI, {"role": "system", "content": [{"type": "text", "text": "# Environment"}]}]
    conversation = read(system="Be brief.", messages=messages).request.conversation
    assert conversation.instructions == "Be brief.\n\n# Environment"
    assert [m.role for m in conversation.messages] == ["user"]


@pytest.mark.parametrize(
    ("thinking", "effort", "shown"),
    [
        (None, "medium", False),
        ({"type": "disabled"}, "low", False),
        ({"type": "enabled", "budget_tokens": 1024}, "low", True),
        ({"type": "enabled", "budget_tokens": 8000}, "medium", True),
        ({"type": "enabled", "budget_tokens": 31999}, "high", True),
        ({"type": "adaptive", "display": "omitted"}, "medium", True),
    ],
)
def test_thinking_picks_the_effort(thinking: Any, effort: str, shown: bool) -> None:
    asked = read(thinking=thinking)
    assert (asked.request.settings.effort, asked.carry_reasoning) == (effort, shown)


def test_output_config_names_the_effort_and_display_omits_the_text() -> None:
    asked = read(thinking={"type": "adaptive", "display": "omitted"},
                 output_config={"effort": "xhigh"})  # fmt: skip
    assert asked.request.settings.effort == "high" and asked.omit_thinking
    assert read(output_config={"effort": "low"}).request.settings.effort == "low"


def test_tool_choice_stops_and_sampling() -> None:
    assert read(tools=[WEATHER], tool_choice={"type": "any"}).request.tool_choice == ToolChoice(
        required=True)  # fmt: skip
    named = read(tools=[WEATHER], tool_choice={"type": "tool", "name": "get_weather",
                                               "disable_parallel_tool_use": True})  # fmt: skip
    assert named.request.tool_choice == ToolChoice(name="get_weather")
    assert read(tools=[WEATHER], tool_choice={"type": "none"}).request.conversation.tools == ()
    asked = read(stop_sequences=["END", "##"], temperature=0.5, top_p=0.9, top_k=40, max_tokens=7)
    settings = asked.request.settings
    assert asked.stops == ("END", "##")
    assert (settings.temperature, settings.top_p, settings.top_k, settings.max_tokens) == (
        0.5, 0.9, 40, 7)  # fmt: skip


def test_what_clients_send_and_changes_nothing_is_accepted() -> None:
    edits = {"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]}
    cache = {"type": "ephemeral"}
    asked = read(metadata={"user_id": "u"}, service_tier="auto", cache_control=cache,
                 context_management=edits, stream=True)  # fmt: skip
    assert asked.stream


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"max_tokens": None}, "max_tokens"),
        ({"mcp_servers": [{"type": "url", "url": "http://x"}]}, "mcp_servers"),
        ({"container": "c"}, "container"),
        (
            {"output_config": {"format": {"type": "json_schema", "schema": {}}}},
            "output_config.format",
        ),
        ({"tools": [{"type": "web_search_20250305", "name": "web_search"}]}, "tools.0"),
        ({"tool_choice": {"type": "tool", "name": "nope"}, "tools": [WEATHER]}, "tool_choice"),
        ({"thinking": {"type": "enabled"}}, "thinking.budget_tokens"),
        (
            {"messages": [{"role": "user", "content": [{"type": "image", "source": {}}]}]},
            "messages.0.content.0",
        ),
        ({"messages": [{"role": "tool", "content": "x"}]}, "messages.0.role"),
        ({"stop_sequences": "END"}, "stop_sequences"),
        ({"stop_sequences": [f"s{n}" for n in range(17)]}, "stop_sequences"),
    ],
)
def test_what_the_server_cannot_honour_is_refused_by_name(fields: dict, named: str) -> None:
    error = refused(**fields)
    assert error.param is not None and error.param.startswith(named)
    assert errors.body(error)["error"]["message"].startswith(named)


def test_errors_are_spelled_as_anthropic_spells_them() -> None:
    unknown = {"type": "error", "error": {"type": "authentication_error", "message": "bad key"}}
    assert errors.body(ApiError(401, "bad key")) == unknown
    kinds = {status: errors.body(ApiError(status, "x"))["error"]["type"]
             for status in (400, 404, 413, 500, 503)}  # fmt: skip
    assert kinds == {400: "invalid_request_error", 404: "not_found_error", 413: "request_too_large",
                     500: "api_error", 503: "overloaded_error"}  # fmt: skip
    failed = ApiError(500, "The model failed: boom", "decode_failed").body()
    event = {"type": "error", "error": {"type": "api_error", "message": "The model failed: boom"}}
    assert errors.error_event(failed) == event


def test_an_engine_without_a_tokenizer_gets_an_estimate_of_the_prompt() -> None:
    """Ollama's engine keeps its tokenizer: count_tokens estimates from the rendered prompt
    (the engine's count_prompt, which it lacks here, is never called)."""
    engine: Any = SimpleNamespace(capabilities=Capabilities(tokenizer=False))

    def counted(text: str) -> int:
        body = {"model": "gpt-oss-20b", "messages": [{"role": "user", "content": text}]}
        return count_tokens(engine, body, NAMES, DEFAULTS, Limits())["input_tokens"]

    short, long = counted("hi"), counted("hi " * 400)
    assert 20 < short < long and long - short >= 200  # the prompt's own tokens, then 1,200 bytes
    with pytest.raises(ApiError) as caught:
        count_tokens(engine, {"model": "gpt-4o", "messages": HI}, NAMES, DEFAULTS, Limits())
    assert caught.value.status == 404
