"""Malformed model output through the real server, both APIs, streamed and whole: a 200 and a
well-formed reply every time (a stream of JSON chunks ending in ``[DONE]``, or Responses events
numbered in order from `response.created` to `response.completed`), never a 500 or a broken
stream; text whose purpose is unclear comes through as reasoning.

Two sources of output. SCRIPTED: the malformed outputs of hostile_output.py (a 10,000-letter
channel name, unknown recipients, cut headers, seeded random token runs) are fed, as the tiny
model's real token ids, through the backend's real `ReplyProgress` and Harmony parser in place
of sampling: what is under test is the parser and serve's mapping of its events, not sampling,
and a random-weight model cannot be made to write 10,000 letters quickly. STEERED: a few short
ones the real tiny model writes itself, its sampling held by a grammar (engine_helpers)."""

from __future__ import annotations

import http.client
import json
import random
import threading
import time
from collections.abc import Generator, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hostile_output import LONG_CHANNEL, Vocab, hostile_cases, random_script
from serve_helpers import Running, Steering, running_server

from gptoss_local.backends.base import Reply, ReplyRequest, Stats, StopReason
from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
from gptoss_local.backends.llamacpp.reply_progress import ReplyProgress
from gptoss_local.events import Event
from gptoss_local.library import Library
from gptoss_local.serve.browsing import BrowsingStreamer

CHAT, RESPONSES = "/v1/chat/completions", "/v1/responses"
RANDOM_RUNS = 24
STEERED = {  # what the real model is held to write (it may only end with <|call|> after)
    "steered unknown function": '<|channel|> "commentary to=functions.nope" <|constrain|> '
    '"json" <|message|> "{\\"a\\": 1}"',
    "steered weird recipient": '<|channel|> "analysis to=weird" <|message|> "not json"',
    "steered nested starts": '<|start|> <|start|> "assistant" <|channel|> "analysis" <|start|> '
    '<|message|> "kept text" <|end|> <|channel|> "fin"',
    "steered header without message": '<|channel|> "final" <|end|> <|start|> "assistant" '
    '<|channel|> "commentaryXYZ to=" <|constrain|> <|message|> "kept words"',
}


# A header the model spells as text ("assistantfinal"), then a real final message, whose
# content the engine holds to the request's format.
SPELLED_FINAL = ('root ::= "assistantfinal not json" <|end|> <|start|> "assistant" '
                 '<|channel|> "final" <|message|> [^<]*')  # fmt: skip
CITY = {"type": "object", "properties": {"city": {"enum": ["Tokyo", "Paris"]}},
        "required": ["city"], "additionalProperties": False}  # fmt: skip


class ScriptedSteering(Steering):
    """The server's `stream` hook: a user message "script NAME" or "random SEED" gets that
    malformed output through the real parser (see above); "steered NAME" is written by the
    real model under that grammar."""

    def __init__(self, backend: LlamaCppBackend) -> None:
        super().__init__(backend)
        self.vocab = Vocab(backend)
        self.cases = hostile_cases(self.vocab)

    def __call__(self, request: ReplyRequest, cancel: threading.Event) -> Reply:
        asked = request.conversation.messages[-1].content
        kind, _, name = asked.partition(" ")
        if request.response_format is not None:
            options = replace(self._reply, grammar=SPELLED_FINAL)
            return self.backend.stream(request, cancel, options=options)
        if kind == "steered":
            grammar = f"root ::= {STEERED[asked]}"
            return self.backend.stream(
                request, cancel, options=replace(self._call, grammar=grammar)
            )
        if kind == "random":
            tokens = random_script(self.vocab, random.Random(int(name)))
        else:
            tokens = self.cases[name]
        return Reply(self._scripted(tokens))

    def _scripted(self, tokens: list[int]) -> Generator[Event, None, Stats]:
        progress = ReplyProgress(
            self.backend._pieces, self.backend._stops, None, time.perf_counter()
        )
        progress.prompt_evaluated()
        reason: StopReason = "length"  # out of tokens without an end token: as max_tokens
        for token in tokens:
            events, stop = progress.feed(token)
            yield from events
            if stop is not None:
                reason = stop
                break
        yield from progress.finish()
        return progress.stats(12, 0, reason, 2048, 12 + len(progress.generated))


@pytest.fixture(scope="module")
def served(tiny_gguf: Path) -> Iterator[Running]:
    with running_server(tiny_gguf, steer=ScriptedSteering) as running:
        yield running


def post(served: Running, path: str, said: str, stream: bool, **extra: Any) -> tuple[int, bytes]:
    body: dict[str, Any] = {"model": "tiny", "stream": stream, "max_tokens": 200, "seed": 1}
    body.update(extra)
    if path == CHAT:
        body["messages"] = [{"role": "user", "content": said}]
    else:
        body = {**body, "input": said, "max_output_tokens": body.pop("max_tokens")}
    connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=120)
    try:
        connection.request("POST", path, body=json.dumps(body),
                           headers={"Content-Type": "application/json"})  # fmt: skip
        answer = connection.getresponse()
        return answer.status, answer.read()
    finally:
        connection.close()


def chat_stream(raw: bytes) -> dict[str, Any]:
    """A Chat Completions stream checked: JSON chunks, one finish reason on the last, then
    [DONE]; its message put together."""
    frames = raw.decode().split("\n\n")
    assert frames[-2:] == ["data: [DONE]", ""], frames[-3:]
    chunks = [json.loads(frame.removeprefix("data: ")) for frame in frames[:-2]]
    assert all(frame.startswith("data: ") for frame in frames[:-2])
    assert all(c.get("object") == "chat.completion.chunk" and "error" not in c for c in chunks)
    finishes = [c["choices"][0]["finish_reason"] for c in chunks]
    assert finishes[-1] in ("stop", "length", "tool_calls") and not any(finishes[:-1])
    message: dict[str, Any] = {"content": "", "reasoning_content": "", "tool_calls": []}
    for chunk in chunks:
        delta = chunk["choices"][0]["delta"]
        message["content"] += delta.get("content") or ""
        message["reasoning_content"] += delta.get("reasoning_content", "")
        message["tool_calls"] += [c["function"] for c in delta.get("tool_calls", [])]
    return {**message, "finish_reason": finishes[-1]}


def chat_whole(raw: bytes) -> dict[str, Any]:
    reply = json.loads(raw)
    assert reply["object"] == "chat.completion"
    choice = reply["choices"][0]
    message = choice["message"]
    calls = [c["function"] for c in message.get("tool_calls", [])]
    assert all(isinstance(c["name"], str) and isinstance(c["arguments"], str) for c in calls)
    reasoning = message.get("reasoning_content", "")
    return {"content": message["content"] or "", "finish_reason": choice["finish_reason"],
            "reasoning_content": reasoning, "tool_calls": calls}  # fmt: skip


def responses_stream(raw: bytes) -> list[dict[str, Any]]:
    """A Responses stream checked: typed events numbered in order, from `response.created`
    to the response's end, each item added before its deltas and done once; its output."""
    frames = raw.decode().split("\n\n")
    assert frames[-1] == ""
    events = []
    for frame in frames[:-1]:
        head, data = frame.split("\n", 1)
        event = json.loads(data.removeprefix("data: "))
        assert head == f"event: {event['type']}"
        events.append(event)
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    kinds = [e["type"] for e in events]
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-1] in ("response.completed", "response.incomplete"), kinds[-3:]
    assert not [k for k in kinds if k in ("error", "response.failed")]
    open_items: set[str] = set()
    for event in events[2:-1]:
        if event["type"] == "response.output_item.added":
            open_items.add(event["item"]["id"])
        elif event["type"] == "response.output_item.done":
            open_items.remove(event["item"]["id"])
        else:
            assert event["item_id"] in open_items, event
    assert not open_items
    return list(events[-1]["response"]["output"])


def responses_whole(raw: bytes) -> list[dict[str, Any]]:
    reply = json.loads(raw)
    assert reply["object"] == "response" and reply["status"] in ("completed", "incomplete")
    return list(reply["output"])


def without_ids(output: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in item.items() if k not in ("id", "call_id")} for item in output]


def both_apis(
    served: Running, text: str, chat_extra: Any = None, responses_extra: Any = None
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The reply to `text` (with the extra fields of each API's request) over both APIs,
    streamed and whole, every one checked; the streamed and whole replies agree."""
    replies = {}
    for path, extra in ((CHAT, chat_extra or {}), (RESPONSES, responses_extra or {})):
        for stream in (True, False):
            status, raw = post(served, path, text, stream, **extra)
            assert status == 200, raw[:500]
            replies[path, stream] = raw
    chat = chat_whole(replies[CHAT, False])
    assert chat_stream(replies[CHAT, True]) == chat
    output = responses_whole(replies[RESPONSES, False])
    assert without_ids(responses_stream(replies[RESPONSES, True])) == without_ids(output)
    return chat, output


def in_format(schema: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Each API's fields that ask for an answer in `schema`."""
    spec = {"name": "city", "schema": schema}
    return ({"response_format": {"type": "json_schema", "json_schema": spec}},
            {"text": {"format": {"type": "json_schema", **spec}}})  # fmt: skip


@pytest.mark.parametrize("name", ["long channel", "long channel, no end", "unknown function",
                                  "unknown recipient", "cut header", "header without message",
                                  "nested starts", "text spelling markers", "no header at all",
                                  "calls without arguments", "bad json arguments",
                                  "markers only", "empty"])  # fmt: skip
def test_scripted_malformed_output_is_a_well_formed_reply(served: Running, name: str) -> None:
    chat, output = both_apis(served, f"script {name}")
    if name == "long channel":  # the channel was text: it comes through as reasoning
        assert chat["reasoning_content"] == LONG_CHANNEL + "kept after"
        assert [item["type"] for item in output] == ["reasoning"]
    if name == "unknown function":
        assert chat["tool_calls"] == [{"name": "nope", "arguments": '{"a": 1}'}]
        assert chat["finish_reason"] == "tool_calls"
        assert output[0]["type"] == "function_call" and output[0]["name"] == "nope"


def test_seeded_random_token_runs_are_well_formed_replies(served: Running) -> None:
    for seed in range(RANDOM_RUNS):
        both_apis(served, f"random {seed}")


WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}}
CHAT_EXTRA = {"tools": [{"type": "function", "function": {"name": "get_weather",
                                                          "parameters": WEATHER}}],
              "stop": ["zz", "}"]}  # fmt: skip
RESPONSES_EXTRA = {"tools": [{"type": "function", "name": "get_weather", "parameters": WEATHER},
                             {"type": "custom", "name": "nope"}],
                   "include": ["reasoning.encrypted_content"]}  # fmt: skip


@pytest.mark.parametrize("summary", [False, True])
def test_random_runs_with_tools_stops_and_carried_reasoning(served: Running, summary: bool) -> None:
    """The same random runs, with tools offered (a freeform one among them), stop strings,
    reasoning handed back sealed, or summarised."""
    responses = (
        {**RESPONSES_EXTRA, "reasoning": {"summary": "auto"}} if summary else RESPONSES_EXTRA
    )
    for seed in range(RANDOM_RUNS // 2):
        both_apis(served, f"random {seed + 100 * summary}", CHAT_EXTRA, responses)


@pytest.mark.parametrize("name", list(STEERED))
def test_malformed_output_the_model_writes_is_a_well_formed_reply(
    served: Running, name: str
) -> None:
    chat, _output = both_apis(served, name)
    if name == "steered unknown function":
        assert chat["tool_calls"] == [{"name": "nope", "arguments": '{"a": 1}'}]
    if name == "steered weird recipient":  # not JSON: handed over as written
        assert chat["tool_calls"] == [{"name": "weird", "arguments": "not json"}]
    if name == "steered nested starts":
        assert "kept text" in chat["reasoning_content"]
    if name == "steered header without message":
        assert "kept words" in chat["reasoning_content"] + chat["content"]


def test_a_spelled_final_header_before_a_held_answer_is_reasoning(served: Running) -> None:
    """The model writes "assistantfinal not json" as text where a header goes, then a real
    final message the engine holds to the format. The parser reads the spelled header as the
    start of an answer; no grammar held that text, so it is reasoning. Before, it was joined to
    the held JSON and the answer missed its format: a 500 (response_format_mismatch), and an
    error inside the stream after the text was sent as the answer."""
    chat, output = both_apis(served, "format please", *in_format(CITY))
    assert chat["finish_reason"] == "stop"
    assert json.loads(chat["content"])["city"] in ("Tokyo", "Paris")
    assert "not json" in chat["reasoning_content"]
    answer = [item for item in output if item["type"] == "message"]
    assert json.loads(answer[0]["content"][0]["text"])["city"] in ("Tokyo", "Paris")


@pytest.mark.parametrize("name", ["browser call, odd name", "browser call, no name"])
def test_a_browser_call_no_tool_can_have_goes_to_the_client(
    served: Running, tmp_path: Path, name: str
) -> None:
    """With `--browser` the server answers the model's browser calls; one whose name no tool
    can have (``browser.x-y``, ``browser.``) cannot go back into the conversation with an
    answer. It is handed to the client as the model wrote it, as a call of any other tool
    not offered is. Before, its answer was refused (a tool name must be an identifier) inside
    the reply: a 500, or a stream cut off."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("zebras have stripes\n", encoding="utf-8")
    with Library.open(tmp_path / "l.db") as library:
        library.update([str(notes)])
        service = served.server.service
        kept = service._stream
        service._stream = BrowsingStreamer(kept, library, (str(notes),))
        try:
            chat, output = both_apis(served, f"script {name}")
        finally:
            service._stream = kept
    (call,) = chat["tool_calls"]
    assert call["name"] in ("browser.x-y", "browser.") and chat["finish_reason"] == "tool_calls"
    assert [item["type"] for item in output if item["type"] != "reasoning"] == ["function_call"]
