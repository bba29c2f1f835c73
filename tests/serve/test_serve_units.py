"""The server's parts without a model: stop strings, the queue, the guard, request mapping."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable

import pytest

from gptoss_local.backends.base import (
    BackendInfo,
    Capabilities,
    GenerationSettings,
    Reply,
    ReplyRequest,
)
from gptoss_local.conversation import Conversation, Message, Tool, ToolCallRecord
from gptoss_local.harmony import render_prompt
from gptoss_local.serve import api_request
from gptoss_local.serve.api_request import checked
from gptoss_local.serve.chat_request import ChatReader
from gptoss_local.serve.errors import ApiError, bad_request
from gptoss_local.serve.guard import Guard, bind_problem
from gptoss_local.serve.limits import Limits
from gptoss_local.serve.responses_request import ResponsesReader
from gptoss_local.serve.scheduler import Busy, Gone, Scheduler
from gptoss_local.serve.service import Service
from gptoss_local.serve.stops import StopFilter

NAMES = ("gpt-oss-20b", "20b")
DEFAULTS = GenerationSettings(effort="medium")
read_chat, read_responses = ChatReader().read, ResponsesReader().read


def fed(stops: tuple[str, ...], pieces: list[str]) -> tuple[str, bool]:
    stop = StopFilter(stops)
    text = "".join(stop.feed(p) for p in pieces) + stop.flush()
    return text, stop.matched


@pytest.mark.parametrize(
    ("stops", "pieces", "expected"),
    [
        ((), ["Hello", " there"], ("Hello there", False)),
        (("\n\n",), ["one\n", "\ntwo"], ("one", True)),
        (("STOP", "end"), ["a S", "TO", "P b"], ("a ", True)),
        (("STOP",), ["a ST", "ill going"], ("a STill going", False)),
        (("xyz",), ["ends with x"], ("ends with x", False)),
        (("there",), ["Hello there and more"], ("Hello ", True)),
    ],
)
def test_stop_strings_cut_the_answer(
    stops: tuple[str, ...], pieces: list[str], expected: tuple[str, bool]
) -> None:
    assert fed(stops, pieces) == expected


def test_the_queue_serves_in_arrival_order() -> None:
    scheduler, order = Scheduler(), []
    cancel = threading.Event()

    def run(name: str) -> None:
        with scheduler.slot(cancel):
            order.append(name)
            time.sleep(0.02)

    with scheduler.slot(cancel):  # hold the model while the others arrive
        threads = []
        for name in "abcde":
            threads.append(threading.Thread(target=run, args=(name,)))
            threads[-1].start()
            while scheduler.waiting < len(threads):
                time.sleep(0.001)
    for thread in threads:
        thread.join(5)
    assert order == list("abcde") and scheduler.waiting == 0


def test_a_full_queue_is_busy_and_a_cancelled_wait_leaves_it() -> None:
    scheduler, cancel, gone = Scheduler(max_waiting=1), threading.Event(), threading.Event()
    outcome: list[str] = []

    def wait() -> None:
        try:
            with scheduler.slot(gone):
                outcome.append("ran")
        except Gone:
            outcome.append("gone")

    with scheduler.slot(cancel):
        waiter = threading.Thread(target=wait)
        waiter.start()
        while scheduler.waiting < 1:
            time.sleep(0.001)
        with pytest.raises(Busy), scheduler.slot(cancel):
            pass
        gone.set()
        waiter.join(5)
    assert outcome == ["gone"] and scheduler.waiting == 0
    with scheduler.slot(cancel) as waited:  # free again
        assert waited < 0.5


def test_as_many_run_at_once_as_the_backend_decodes_together() -> None:
    scheduler, cancel = Scheduler(max_waiting=1, running=2), threading.Event()
    started: list[str] = []

    def third() -> None:
        with scheduler.slot(cancel):
            started.append("third")

    with scheduler.slot(cancel) as first_waited, scheduler.slot(cancel) as second_waited:
        assert first_waited < 0.5 and second_waited < 0.5  # both run at once
        waiter = threading.Thread(target=third)
        waiter.start()
        while scheduler.waiting < 1:
            time.sleep(0.001)
        with pytest.raises(Busy), scheduler.slot(cancel):
            pass  # two running, one waiting: full
        assert started == []
    waiter.join(5)
    assert started == ["third"] and scheduler.waiting == 0


def test_only_loopback_binds_without_a_key() -> None:
    assert bind_problem("127.0.0.1", None) is None and bind_problem("::1", None) is None
    assert bind_problem("localhost", None) is None
    assert "every network interface" in (bind_problem("0.0.0.0", None) or "")
    assert "--api-key" in (bind_problem("192.168.1.5", None) or "")
    assert bind_problem("0.0.0.0", "key") is None


def test_the_host_header_must_name_this_server(monkeypatch: pytest.MonkeyPatch) -> None:
    loopback = Guard("127.0.0.1", 8080)
    assert loopback.host_ok("127.0.0.1:8080") and loopback.host_ok("localhost:8080")
    assert loopback.host_ok("[::1]:8080")
    for bad in (None, "", "evil.com:8080", "127.0.0.1:8081", "localhost", "a b:8080"):
        assert not loopback.host_ok(bad)
    monkeypatch.setattr("socket.gethostname", lambda: "gpu-box")
    lan = Guard("0.0.0.0", 8080, "key", allowed_hosts=frozenset({"chat.example.com"}))
    for good in ("192.168.1.5:8080", "gpu-box:8080", "gpu-box.lan:8080", "chat.example.com:8080"):
        assert lan.host_ok(good)
    for bad in ("evil.com:8080", "gpu-box.evil.com:8080", "192.168.1.5:9999"):
        assert not lan.host_ok(bad)
    assert Guard("192.168.1.5", 80, "k").host_ok("192.168.1.5")


def test_the_key_is_a_bearer_token() -> None:
    guard = Guard("127.0.0.1", 8080, "s3cret")
    assert guard.key_ok("Bearer s3cret") and guard.key_ok("bearer s3cret")
    for bad in (None, "", "Bearer", "Bearer wrong", "Basic s3cret", "s3cret"):
        assert not guard.key_ok(bad)
    assert Guard("127.0.0.1", 8080).key_ok(None)


def test_the_key_may_come_as_x_api_key() -> None:
    # Anthropic's clients send the key in `x-api-key` rather than as a bearer token.
    guard = Guard("127.0.0.1", 8080, "s3cret")
    assert guard.key_ok(None, "s3cret") and guard.key_ok("Bearer wrong", "s3cret")
    for bad in ("", "wrong", "Bearer s3cret"):
        assert not guard.key_ok(None, bad)


def test_cors_only_for_the_origins_named() -> None:
    assert Guard("127.0.0.1", 1).cors_origin("http://a") is None
    named = Guard("127.0.0.1", 1, cors=("http://a",))
    assert named.cors_origin("http://a") == "http://a" and named.cors_origin("http://b") is None
    assert Guard("127.0.0.1", 1, cors=("*",)).cors_origin("http://b") == "*"


def test_chat_messages_become_a_harmony_conversation() -> None:
    asked = read_chat(
        {
            "model": "20b",
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": [{"type": "text", "text": "weather?"}]},
                {"role": "assistant", "content": None, "reasoning": "Need it",
                 "tool_calls": [{"id": "c1", "type": "function",
                                 "function": {"name": "get_weather", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
            ],
            "max_tokens": 50, "max_completion_tokens": 40, "temperature": 0.5, "seed": 4,
            "stop": "\n", "stream": True, "stream_options": {"include_usage": True},
        },
        NAMES, DEFAULTS,
    )  # fmt: skip
    c = asked.request.conversation
    assert asked.model == "gpt-oss-20b" and c.instructions == "Be brief."
    assert [m.role for m in c.messages] == ["user", "assistant", "tool"]
    assert (
        c.messages[1].reasoning == "Need it" and c.messages[1].tool_calls[0].name == "get_weather"
    )
    assert c.messages[2].tool_name == "get_weather"
    s = asked.request.settings
    assert (s.max_tokens, s.temperature, s.seed, s.effort) == (40, 0.5, 4, "medium")
    assert asked.stops == ("\n",) and asked.stream and asked.include_usage


def test_response_items_group_into_assistant_messages() -> None:
    asked = read_responses(
        {
            "model": "gpt-oss-20b",
            "instructions": "Be brief.",
            "input": [
                {"role": "developer", "content": "In French."},
                {"role": "user", "content": "weather?"},
                {"type": "reasoning", "id": "rs_1", "summary": [],
                 "content": [{"type": "reasoning_text", "text": "Need it"}]},
                {"type": "function_call", "call_id": "c1", "name": "get_weather",
                 "arguments": "{}"},
                {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
                {"type": "reasoning", "content": [{"type": "reasoning_text", "text": "Done"}]},
                {"type": "message", "role": "assistant",
                 "content": [{"type": "output_text", "text": "Sunny."}]},
                {"role": "user", "content": "thanks"},
            ],
            "reasoning": {"effort": "high"},
            "max_output_tokens": 99,
        },
        NAMES, DEFAULTS,
    )  # fmt: skip
    c = asked.request.conversation
    assert c.instructions == "Be brief.\n\nIn French."
    assert [m.role for m in c.messages] == ["user", "assistant", "tool", "assistant", "user"]
    first, result, second = c.messages[1:4]
    assert first.reasoning == "Need it" and first.tool_calls[0].name == "get_weather"
    assert result.tool_name == "get_weather"
    assert (second.reasoning, second.content) == ("Done", "Sunny.")
    assert asked.request.settings.effort == "high" and asked.request.settings.max_tokens == 99
    assert read_responses(
        {"model": "20b", "input": "hi"}, NAMES, DEFAULTS
    ).request.conversation.messages


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"messages": [{"role": "user", "content": "hi"}]}, "model"),
        ({"model": "20b"}, "messages"),
        ({"model": "20b", "messages": [{"role": "wizard", "content": "x"}]}, "messages[0].role"),
        ({"model": "20b", "messages": [{"role": "user", "content": [{"type": "image_url"}]}]},
         "messages[0].content"),
        ({"model": "20b", "messages": [{"role": "user", "content": "x"}], "top_p": 0}, "top_p"),
        ({"model": "20b", "messages": [{"role": "user", "content": "x"}], "max_tokens": 0},
         "max_tokens"),
        ({"model": "20b", "messages": [{"role": "user", "content": "x"}], "stop": [""]}, "stop"),
        ({"model": "20b", "messages": [{"role": "user", "content": "x"}],
          "tool_choice": "required"}, "tool_choice"),
        ({"model": "20b", "messages": [{"role": "user", "content": "x"}],
          "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": []}}},
         "response_format.json_schema.schema"),
        ({"model": "20b", "messages": [{"role": "user", "content": "x"}],
          "tools": [{"type": "web_search"}]}, "tools[0]"),
    ],
)  # fmt: skip
def test_chat_requests_the_server_cannot_honour(body: dict, param: str) -> None:
    with pytest.raises(ApiError) as refused:
        read_chat(body, NAMES, DEFAULTS)
    assert refused.value.status == 400 and refused.value.param == param


def test_responses_requests_the_server_cannot_honour() -> None:
    for body in (
        {"model": "20b", "input": "hi", "previous_response_id": "resp_1"},
        {"model": "20b", "input": [{"type": "item_reference", "id": "x"}]},
        {"model": "20b", "input": []},
        {"model": "20b", "input": "hi", "text": {"format": {"type": "json_schema"}}},
    ):
        with pytest.raises(ApiError) as refused:
            read_responses(body, NAMES, DEFAULTS)
        assert refused.value.status == 400
    with pytest.raises(ApiError) as missing:
        read_responses({"model": "gpt-5", "input": "hi"}, NAMES, DEFAULTS)
    assert missing.value.status == 404 and missing.value.code == "model_not_found"


class _NoTools:
    """An engine that declares nothing beyond plain replies (and is never asked for one)."""

    capabilities = Capabilities()

    def info(self) -> BackendInfo:
        return BackendInfo("plain", "gpt-oss-20b", "CPU", 4096)

    def stream(self, request: ReplyRequest, cancel: threading.Event | None = None) -> Reply:
        raise AssertionError("a refused request never reaches the engine")


@pytest.mark.parametrize(
    ("path", "body", "param"),
    [
        ("/v1/chat/completions", {"messages": [{"role": "user", "content": "x"}],
                                  "tools": [{"type": "function", "function": {"name": "add"}}]},
         "tools"),
        ("/v1/responses", {"input": "x", "tools": [{"type": "function", "name": "add"}]}, "tools"),
    ],
)  # fmt: skip
def test_what_the_engine_cannot_do_is_a_400_before_the_queue(
    path: str, body: dict, param: str
) -> None:
    service = Service(_NoTools(), NAMES, DEFAULTS)  # type: ignore[arg-type]
    with pytest.raises(ApiError) as refused:
        service.post(path, {"model": "20b", **body}, threading.Event())
    assert refused.value.status == 400 and refused.value.param == param
    assert "the plain engine cannot offer function tools" in refused.value.message
    assert service.scheduler.waiting == 0


def _refusal(
    check: Callable[[Conversation, Limits], object], conversation: Conversation, limits: Limits
) -> tuple[object, ...] | None:
    try:
        check(conversation, limits)
    except ApiError as refused:
        return refused.status, refused.code, refused.param, refused.message
    return None


def _rendered_whole(conversation: Conversation, limits: Limits) -> None:
    """The check as it was: render the whole prompt, then measure it."""
    if not conversation.messages:
        raise bad_request("the conversation has no messages", "messages")
    try:
        prompt = render_prompt(list(conversation.messages), instructions=
                               conversation.instructions, tools=conversation.tools)  # fmt: skip
    except ValueError as exc:
        raise bad_request(str(exc), "messages") from None
    limits.check_prompt(prompt, "messages")


def _checked(conversation: Conversation, limits: Limits) -> None:
    checked(conversation, "messages", limits)


def _random_conversation(rng: random.Random) -> Conversation:
    def text() -> str:
        pieces = ("", "a", "word ", "<|end|>", "<|start|>x", "<|", "|>", "\n", "é")
        return "".join(rng.choice(pieces) for _ in range(rng.choice((0, 1, 5, 60, 300))))

    messages: list[Message] = []
    for _ in range(rng.randint(0, 6)):
        role = rng.choice(("user", "assistant", "assistant", "tool"))
        if role == "user":
            messages.append(Message("user", text()))
        elif role == "tool":
            messages.append(Message("tool", text(), tool_name=rng.choice((None, "add", "f"))))
        else:
            calls = tuple(ToolCallRecord(rng.choice(("add", "f")), text())
                          for _ in range(rng.choice((0, 0, 1, 2))))  # fmt: skip
            messages.append(Message("assistant", text(), text(), calls))
    tools = tuple(Tool(rng.choice(("add", "f", "g")), text()) for _ in range(rng.randint(0, 2)))
    return Conversation(tuple(messages), rng.choice((None, text())), tools)


def test_the_conversation_is_refused_as_a_whole_render_would_refuse_it() -> None:
    rng, limits, refused = random.Random(22), Limits(48), set()
    for _ in range(3000):
        conversation = _random_conversation(rng)
        expected = _refusal(_rendered_whole, conversation, limits)
        assert _refusal(_checked, conversation, limits) == expected
        refused.add(expected[1] if expected else None)
    assert refused == {None, "invalid_value", "context_length_exceeded"}  # each verdict met


def test_a_conversation_that_fits_is_checked_in_outline_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    longest: list[int] = []

    def measured(messages: list[Message], **options: object) -> str:
        longest.append(max(len(m.content) for m in messages))
        return render_prompt(messages, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(api_request, "render_prompt", measured)
    conversation = Conversation((Message("user", "word " * 2000),))
    checked(conversation, "messages", Limits())  # 10,000 characters: far within
    assert longest == [1]
    with pytest.raises(ApiError, match=r"is 10,\d{3} characters"):
        checked(conversation, "messages", Limits(256))  # 8,192 at most: measured whole
    assert longest == [1, 1, 10_000]
