"""Writing Messages replies (`serve.anthropic.reply`) from a generation's events: the blocks in
the order the model wrote them, thinking signed and never in a text block, the stream's events
adding up to the whole message, and the stop reasons."""

from __future__ import annotations

import json
import threading
from collections.abc import Generator, Iterable
from typing import Any

from read_helpers import DEFAULTS, NAMES

from gptoss_local.backends.base import Reply, ReplyRequest, Stats, StopReason
from gptoss_local.events import AnswerDelta, Event, ReasoningDelta, TurnEnded
from gptoss_local.harmony.calls import tool_call
from gptoss_local.serve.anthropic.reply import MessagesReply
from gptoss_local.serve.anthropic.request import MessagesReader, MessagesRequest
from gptoss_local.serve.anthropic.thinking import sign
from gptoss_local.serve.carried import unseal
from gptoss_local.serve.generation import Generation

ANSWERED = [ReasoningDelta("The user "), ReasoningDelta("says hi"), AnswerDelta("Hello "),
            AnswerDelta("there"), TurnEnded("return")]  # fmt: skip
CALLED = [ReasoningDelta("Need the weather"), AnswerDelta("Checking."),
          tool_call("functions.get_weather", '{"city": "Tokyo"}'), TurnEnded("call")]  # fmt: skip
DELTA_KEYS = {"thinking_delta": "thinking", "text_delta": "text", "signature_delta": "signature",
              "input_json_delta": "partial_json"}  # fmt: skip
STATS = Stats(prompt_tokens=30, cached_tokens=10, generated_tokens=5)


def asked(**fields: Any) -> MessagesRequest:
    body = {"model": "gpt-oss-20b", "max_tokens": 100,
            "messages": [{"role": "user", "content": "hi"}], **fields}  # fmt: skip
    return MessagesReader().read(body, NAMES, DEFAULTS)


def generation(request: MessagesRequest, events: Iterable[Event], reason: StopReason) -> Generation:
    def stream(_: ReplyRequest, cancel: threading.Event) -> Reply:
        def run() -> Generator[Event, None, Stats]:
            yield from events
            return Stats(**{**vars(STATS), "stop_reason": reason})

        return Reply(run())

    return Generation(stream, request, threading.Event())


def whole(request: MessagesRequest, events: list[Event], reason: StopReason) -> dict[str, Any]:
    made = generation(request, events, reason)
    return MessagesReply(request).whole(made, made)


def streamed(request: MessagesRequest, events: list[Event], reason: StopReason) -> list[dict]:
    return streamed_and_whole(request, events, reason)[0]


def streamed_and_whole(
    request: MessagesRequest, events: list[Event], reason: StopReason
) -> tuple[list[dict], dict[str, Any]]:
    """A reply's stream, and the message it makes once it has ended."""
    made, reply = generation(request, events, reason), MessagesReply(request)
    return list(reply.pieces(made, made)), reply.message(made)


def test_thinking_asked_for_comes_first_and_signed() -> None:
    message = whole(asked(thinking={"type": "enabled", "budget_tokens": 2000}), ANSWERED, "return")
    assert message["content"] == [
        {"type": "thinking", "thinking": "The user says hi", "signature": sign("The user says hi")},
        {"type": "text", "text": "Hello there"}]  # fmt: skip
    assert message["id"].startswith("msg_") and message["model"] == "gpt-oss-20b-mxfp4"
    assert (message["stop_reason"], message["stop_sequence"]) == ("end_turn", None)
    assert message["usage"] == {"input_tokens": 20, "cache_read_input_tokens": 10,
                                "cache_creation_input_tokens": 0, "output_tokens": 5}  # fmt: skip


def test_a_plain_answer_without_thinking_asked_is_its_text_alone() -> None:
    message = whole(asked(), ANSWERED, "return")
    assert message["content"] == [{"type": "text", "text": "Hello there"}]


def test_a_turn_that_calls_tools_carries_its_reasoning_before_the_call() -> None:
    message = whole(asked(), CALLED, "call")
    assert [b["type"] for b in message["content"]] == ["text", "thinking", "tool_use"]
    text, thinking, call = message["content"]
    assert text["text"] == "Checking." and unseal(thinking["signature"]) == "Need the weather"
    assert (call["name"], call["input"]) == ("get_weather", {"city": "Tokyo"})
    assert call["id"].startswith("toolu_") and message["stop_reason"] == "tool_use"


def test_omitted_thinking_keeps_its_reasoning_in_the_signature_only() -> None:
    request = asked(thinking={"type": "adaptive", "display": "omitted"})
    events = streamed(request, ANSWERED, "return")
    assert not any(e.get("delta", {}).get("type") == "thinking_delta" for e in events)
    thinking = whole(request, ANSWERED, "return")["content"][0]
    assert thinking["thinking"] == "" and unseal(thinking["signature"]) == "The user says hi"


def test_the_stream_adds_up_to_the_whole_message() -> None:
    request = asked(thinking={"type": "enabled", "budget_tokens": 2000})
    events, final = streamed_and_whole(request, CALLED, "call")
    kinds = [e["type"] for e in events]
    assert kinds[0] == "message_start" and kinds[-2:] == ["message_delta", "message_stop"]
    assert events[0]["message"]["content"] == [] and events[0]["message"]["stop_reason"] is None
    blocks: list[dict[str, Any]] = []  # rebuilt as a client does
    for event in events:
        if event["type"] == "content_block_start":
            assert event["index"] == len(blocks)
            blocks.append(dict(event["content_block"]))
        elif event["type"] == "content_block_delta":
            block, delta = blocks[event["index"]], event["delta"]
            key = DELTA_KEYS[delta["type"]]
            block[key] = block.get(key, "") + delta[key]
    for block in blocks:
        if block["type"] == "tool_use":
            block["input"] = json.loads(block.pop("partial_json"))
    assert blocks == final["content"]
    assert [b["type"] for b in blocks] == ["thinking", "text", "tool_use"]
    assert events[-2]["delta"] == {"stop_reason": "tool_use", "stop_sequence": None}
    assert events[-2]["usage"]["output_tokens"] == 5
    assert kinds.count("content_block_stop") == 3


def test_a_stop_sequence_says_which_one_ended_it() -> None:
    message = whole(asked(stop_sequences=["zz", "the"]), ANSWERED, "return")
    assert message["content"] == [{"type": "text", "text": "Hello "}]
    assert (message["stop_reason"], message["stop_sequence"]) == ("stop_sequence", "the")


def test_the_token_limit_is_max_tokens() -> None:
    cut = [ReasoningDelta("r"), AnswerDelta("Hel"), TurnEnded("truncated")]
    assert whole(asked(), cut, "length")["stop_reason"] == "max_tokens"
