"""Response formats in both APIs' spellings, read into `ResponseFormat` (a bad schema is a 400
naming the field), how a generation ends (a call the token limit cut is no call; a whole
answer is held to its format, a cut one is not), and what a response object echoes."""

from __future__ import annotations

import threading
from collections.abc import Generator, Iterable
from typing import Any

import pytest
from read_helpers import DEFAULTS, NAMES, SCHEMA, chat, refused, responses

from gptoss_local.backends.base import Reply, ReplyRequest, ResponseFormat, Stats, StopReason
from gptoss_local.conversation import Conversation, Message
from gptoss_local.events import AnswerDelta, Event, ReasoningDelta, ToolCall, TurnEnded
from gptoss_local.harmony.calls import tool_call
from gptoss_local.serve.api_request import ApiRequest
from gptoss_local.serve.errors import ApiError
from gptoss_local.serve.generation import Generation
from gptoss_local.serve.responses_reply import ResponsesReply
from gptoss_local.serve.responses_request import ResponsesReader

# -- response formats ------------------------------------------------------------------------


def test_formats_in_either_spelling() -> None:
    named = {"name": "answer", "schema": SCHEMA, "strict": True, "description": "The answer."}
    described = ResponseFormat(SCHEMA, "answer", True, description="The answer.")
    assert chat(response_format={"type": "json_schema", "json_schema": named}).response_format \
        == described  # fmt: skip
    assert responses(text={"format": {"type": "json_schema", **named}}).response_format \
        == described  # fmt: skip
    as_object = ResponseFormat(None, "json_object", False)
    assert chat(response_format={"type": "json_object"}).response_format == as_object
    assert responses(text={"format": {"type": "json_object"}}).response_format == as_object
    assert chat(response_format={"type": "text"}).response_format is None
    assert responses(text={"format": {"type": "text"}, "verbosity": "low"}).response_format is None
    loose = {"type": "json_schema", "json_schema": {"name": "x", "schema": SCHEMA}}
    assert chat(response_format=loose).response_format == ResponseFormat(SCHEMA, "x", False)


@pytest.mark.parametrize(
    ("fmt", "param"),
    [
        ({"type": "json_schema", "json_schema": {"name": "x", "schema": "{}"}},
         "response_format.json_schema.schema"),
        ({"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "thing"}}},
         "response_format.json_schema.schema"),
        ({"type": "json_schema", "json_schema": {"name": "x", "schema": {"minimum": "0"}}},
         "response_format.json_schema.schema"),
        ({"type": "json_schema", "json_schema": {"name": "x"}},
         "response_format.json_schema.schema"),
        ({"type": "json_schema", "json_schema": {"name": "a b", "schema": SCHEMA}},
         "response_format.json_schema.name"),
        ({"type": "json_schema", "json_schema": {"schema": SCHEMA, "strict": "yes"}},
         "response_format.json_schema.strict"),
        ({"type": "json_schema"}, "response_format.json_schema"),
        ({"type": "grammar"}, "response_format.type"),
        ("json", "response_format"),
    ],
)  # fmt: skip
def test_bad_chat_formats_name_the_field(fmt: Any, param: str) -> None:
    assert refused(chat, response_format=fmt).param == param


@pytest.mark.parametrize(
    ("text", "param"),
    [
        ({"format": {"type": "json_schema", "name": "x", "schema": [1]}}, "text.format.schema"),
        ({"format": {"type": "json_schema", "name": "x", "schema": {"properties": 3}}},
         "text.format.schema"),
        ({"format": {"type": "json_schema", "name": "x"}}, "text.format.schema"),
        ({"format": {"type": "json_schema", "name": "", "schema": SCHEMA}}, "text.format.name"),
        ({"format": {"type": "yaml"}}, "text.format.type"),
        ({"format": "json"}, "text.format"),
        ("json", "text"),
    ],
)  # fmt: skip
def test_bad_responses_formats_name_the_field(text: Any, param: str) -> None:
    assert refused(responses, text=text).param == param


def test_a_huge_schema_is_refused() -> None:
    huge = {"type": "object", "description": "x" * 70_000}
    fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": huge}}
    assert "characters" in refused(chat, response_format=fmt).message


# -- how a generation ends -------------------------------------------------------------------


def scripted(events: Iterable[Event], reason: StopReason) -> Any:
    def stream(request: ReplyRequest, cancel: threading.Event) -> Reply:
        def run() -> Generator[Event, None, Stats]:
            yield from events
            return Stats(stop_reason=reason)

        return Reply(run())

    return stream


def generated(
    events: list[Event], reason: StopReason, fmt: ResponseFormat | None = None,
    stops: tuple[str, ...] = (),
) -> tuple[list[Event], Generation]:  # fmt: skip
    request = ReplyRequest(Conversation((Message("user", "hi"),)), response_format=fmt)
    asked = ApiRequest("m", request, stops=stops)
    generation = Generation(scripted(events, reason), asked, threading.Event())
    return list(generation), generation


CUT = tool_call("functions.get_weather", '{"city": "To', cut=True)
WHOLE = tool_call("functions.get_weather", '{"city": "Tokyo"}')


def test_a_call_cut_by_the_token_limit_is_not_a_call() -> None:
    out, generation = generated([ReasoningDelta("r"), CUT, TurnEnded("truncated")], "length")
    assert out == [ReasoningDelta("r")] and generation.finish == "length"
    out, generation = generated([CUT], "context_full")
    assert out == [] and generation.finish == "length"


def test_a_whole_call_is_a_call() -> None:
    out, generation = generated([ReasoningDelta("r"), WHOLE, TurnEnded("call")], "call")
    assert out == [ReasoningDelta("r"), WHOLE] and generation.finish == "tool_calls"
    bad = ToolCall("get_weather", {}, "{oops", "arguments are not valid JSON")
    out, generation = generated([bad, TurnEnded("call")], "call")
    assert out == [bad] and generation.finish == "tool_calls"  # the model's, as written


def answer(text: str, reason: StopReason = "return", **extra: Any) -> list[Event]:
    pieces = [text[:3], text[3:]] if len(text) > 3 else [text]
    events: list[Event] = [AnswerDelta(p) for p in pieces]
    out, generation = generated([*events, TurnEnded("return")], reason, **extra)
    assert generation.stats is not None
    return out


def test_an_answer_is_held_to_its_format() -> None:
    fmt = ResponseFormat(SCHEMA, "x")
    assert answer('{"a": 1}', fmt=fmt) == [AnswerDelta('{"a'), AnswerDelta('": 1}')]
    for wrong, why in (('{"a": "1"}', "is not of type"), ('{"a": ', "not JSON"), ("", "empty")):
        with pytest.raises(ApiError) as caught:
            answer(wrong, fmt=fmt)
        assert caught.value.status == 500 and caught.value.code == "response_format_mismatch"
        assert why in caught.value.message
    with pytest.raises(ApiError, match="not an object"):
        answer("[1]", fmt=ResponseFormat(None, "json_object", False))


def test_an_answer_cut_short_is_not_checked() -> None:
    fmt = ResponseFormat(SCHEMA, "x")
    assert answer('{"a": ', "length", fmt=fmt) == [AnswerDelta('{"a'), AnswerDelta('": ')]
    assert answer('{"a": 1} END', fmt=fmt, stops=(" END",)) == [AnswerDelta('{"a'),
                                                              AnswerDelta('": 1}')]  # fmt: skip
    assert answer('{"a": ', "cancelled", fmt=fmt)  # the client left


# -- what the Responses API echoes -----------------------------------------------------------


def test_a_response_object_echoes_the_format_and_the_choice() -> None:
    flat = [{"type": "function", "name": "get_time"}]
    text = {"format": {"type": "json_schema", "name": "x", "schema": SCHEMA, "strict": True}}
    body = {"model": "gpt-oss-20b", "input": "hi", "tools": flat, "text": text,
            "tool_choice": {"type": "function", "name": "get_time"}}  # fmt: skip
    shown = ResponsesReply(ResponsesReader().read(body, NAMES, DEFAULTS)).response()
    assert shown["text"] == text and shown["tool_choice"] == {"type": "function",
                                                              "name": "get_time"}  # fmt: skip
    plain = ResponsesReply(ResponsesReader().read({**body, "text": None, "tool_choice": None},
                                                  NAMES, DEFAULTS)).response()  # fmt: skip
    assert plain["text"] == {"format": {"type": "text"}} and plain["tool_choice"] == "auto"
