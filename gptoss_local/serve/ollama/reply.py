"""Replies in Ollama's shape: one JSON object, or a stream of them, one a line (NDJSON).

A chat reply's objects carry `message` (`content`; the reasoning apart, as `thinking`; calls
as `tool_calls` with their arguments as an object), a generate reply's `response` and
`thinking`. The last object has `done: true`, `done_reason` ("stop", or "length" when the
token limit ended it) and the counts, durations in nanoseconds.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from typing import Any

from gptoss_local.backends.base import Stats
from gptoss_local.events import AnswerDelta, Event, PreambleDelta, ReasoningDelta, ToolCall
from gptoss_local.harmony.names import ToolNames
from gptoss_local.serve.api_request import ApiRequest
from gptoss_local.serve.errors import ApiError
from gptoss_local.serve.generation import Generation

Piece = dict[str, Any]
NANOS = 1_000_000_000


def now() -> str:
    """The time as Ollama writes `created_at` (RFC 3339, UTC)."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")


def ndjson(piece: Piece) -> bytes:
    """One object of a stream, as its line."""
    return json.dumps(piece, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def error_piece(body: Piece) -> Piece:
    """The line that tells a stream the generation failed, from the error's JSON body."""
    return {"error": body["error"]["message"]}


def call_json(call: ToolCall, index: int, names: ToolNames) -> Piece:
    """A tool call as Ollama gives it: by the client's name of its tool (`names`), the
    arguments as an object."""
    name = names.called(call.name)
    if call.error:  # never hand over arguments the client would have to guess at
        raise ApiError(500, f"The model's call to {name!r} has arguments that are not a "
                       f"JSON object ({call.error}); asking again may succeed.",
                       "bad_tool_call")  # fmt: skip
    return {"function": {"index": index, "name": name, "arguments": call.arguments}}


def counts(generation: Generation) -> Piece:
    """The last object's counts and durations (nanoseconds, from when the generation was
    asked for; the model was loaded already)."""
    s = generation.stats or Stats()
    return {
        "total_duration": time.monotonic_ns() - generation.started,
        "load_duration": 0,
        "prompt_eval_count": s.prompt_tokens,
        "prompt_eval_duration": int(s.prefill_seconds * NANOS),
        "eval_count": s.generated_tokens,
        "eval_duration": int(s.decode_seconds * NANOS),
    }


class ChatReply:
    """The reply to one `/api/chat` request."""

    def __init__(self, asked: ApiRequest) -> None:
        self.asked = asked

    def whole(self, events: Iterable[Event], generation: Generation) -> Piece:
        """The whole reply as one object (after the generation has ended)."""
        thinking: list[str] = []
        text: list[str] = []
        calls: list[Piece] = []
        for event in events:
            if isinstance(event, ReasoningDelta):
                thinking.append(event.text)
            elif isinstance(event, (AnswerDelta, PreambleDelta)):
                text.append(event.text)
            elif isinstance(event, ToolCall):
                calls.append(call_json(event, len(calls), self.asked.names))
        return self._last(generation, self._part("".join(text), "".join(thinking), calls))

    def pieces(self, events: Iterable[Event], generation: Generation) -> Iterator[Piece]:
        """The reply as the objects of its stream, the last one with the counts."""
        calls = 0
        for event in events:
            if isinstance(event, ReasoningDelta):
                yield self._piece(self._part("", event.text, []))
            elif isinstance(event, (AnswerDelta, PreambleDelta)):
                yield self._piece(self._part(event.text, "", []))
            elif isinstance(event, ToolCall):
                yield self._piece(self._part("", "", [call_json(event, calls, self.asked.names)]))
                calls += 1
        yield self._last(generation, self._part("", "", []))

    def _part(self, text: str, thinking: str, calls: list[Piece]) -> Piece:
        message: Piece = {"role": "assistant", "content": text}
        if thinking:
            message["thinking"] = thinking
        if calls:
            message["tool_calls"] = calls
        return {"message": message}

    def _piece(self, part: Piece) -> Piece:
        return {"model": self.asked.model, "created_at": now(), **part, "done": False}

    def _last(self, generation: Generation, part: Piece) -> Piece:
        reason = "length" if generation.finish == "length" else "stop"
        head = {**self._piece(part), "done": True, "done_reason": reason}
        return {**head, **counts(generation)}


class GenerateReply(ChatReply):
    """The reply to one `/api/generate` request: `response` and `thinking` at the top."""

    def _part(self, text: str, thinking: str, calls: list[Piece]) -> Piece:
        part: Piece = {"response": text}
        if thinking:
            part["thinking"] = thinking
        return part
