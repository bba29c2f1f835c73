"""A streamed chat completion as it is read: reasoning and answer deltas as events, tool call
fragments joined into calls, the usage, the finish reason, and, from our own engine, each
call's channel and the engine's own timings (`urls.OURS_FIELD`)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from gptoss_local.backends.base import BackendError, Stats, StopReason
from gptoss_local.backends.openai.http import HttpFailure
from gptoss_local.conversation import CALL_CHANNELS
from gptoss_local.events import AnswerDelta, Event, ReasoningDelta, ToolCall
from gptoss_local.harmony.calls import tool_call
from gptoss_local.i18n import _
from gptoss_local.urls import OURS_FIELD


class Reading:
    """What the stream has said so far: tool call fragments, usage, the finish reason."""

    def __init__(self) -> None:
        self.finish: str | None = None
        self.usage: dict[str, Any] = {}
        self.first: float | None = None
        self.last: float | None = None
        self._calls: dict[int, dict[str, str]] = {}
        self.engine: dict[str, Any] = {}

    def chunk(self, chunk: Any) -> Iterator[Event]:
        if not isinstance(chunk, dict):
            return
        if isinstance(chunk.get("error"), dict | str):
            message = HttpFailure(500, chunk).message()
            raise BackendError(
                _("the server failed mid-reply: {message}").format(message=message),
                kind="stream_broken",
            )
        self.usage = chunk.get("usage") or self.usage
        ours = chunk.get(OURS_FIELD)  # our engine's own figures of the reply
        if isinstance(ours, dict) and isinstance(ours.get("stats"), dict):
            self.engine = ours["stats"]
        for choice in chunk.get("choices") or ():
            delta = choice.get("delta") or {}
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if reasoning:
                self._seen()
                yield ReasoningDelta(reasoning)
            if delta.get("content"):
                self._seen()
                yield AnswerDelta(delta["content"])
            for fragment in delta.get("tool_calls") or ():
                self._fragment(fragment)
            self.finish = choice.get("finish_reason") or self.finish

    def calls(self) -> Iterator[ToolCall]:
        """The tool calls, once their fragments are complete."""
        for index in sorted(self._calls):
            call = self._calls[index]
            yield tool_call(call["name"], call["arguments"], channel=call["channel"])

    def stats(self, started: float, reason: StopReason, context: int) -> Stats:
        u = self.usage
        prompt, generated = int(u.get("prompt_tokens") or 0), int(u.get("completion_tokens") or 0)
        cached = int((u.get("prompt_tokens_details") or {}).get("cached_tokens") or 0)
        reasoning = int((u.get("completion_tokens_details") or {}).get("reasoning_tokens") or 0)
        decode = (self.last - self.first) if self.first and self.last else 0.0
        stats = Stats(
            prompt_tokens=prompt, cached_tokens=cached, evaluated_tokens=prompt - cached,
            generated_tokens=generated, reasoning_tokens=reasoning,
            answer_tokens=max(generated - reasoning, 0),
            ttft_seconds=self.first - started if self.first else None, decode_seconds=decode,
            decode_tokens_per_second=generated / decode if decode > 0 else None,
            stop_reason=reason, context_size=context, context_used=prompt + generated,
        )  # fmt: skip
        return self._engines(stats)

    def _engines(self, stats: Stats) -> Stats:
        """`stats` with the timings our engine measured itself, where it sent them: the prefill
        (which the client cannot see) and the decode, without the network between. The time
        to the first token stays the client's: waiting in the engine's queue is part of it."""
        e = self.engine
        prefill, decode = _number(e.get("prefill_seconds")), _number(e.get("decode_seconds"))
        if prefill is None or decode is None:
            return stats
        evaluated = e.get("evaluated_tokens")
        return replace(
            stats, prefill_seconds=prefill, decode_seconds=decode,
            decode_tokens_per_second=_number(e.get("decode_tokens_per_second")),
            evaluated_tokens=evaluated if isinstance(evaluated, int) else stats.evaluated_tokens,
        )  # fmt: skip

    def _seen(self) -> None:
        self.last = time.monotonic()
        self.first = self.first or self.last

    def _fragment(self, fragment: Any) -> None:
        call = self._calls.setdefault(
            int(fragment.get("index") or 0), {"name": "", "arguments": "", "channel": "commentary"}
        )
        ours = fragment.get(OURS_FIELD)  # our engine says where the model wrote the call
        if isinstance(ours, dict) and ours.get("channel") in CALL_CHANNELS:
            call["channel"] = ours["channel"]
        function = fragment.get("function") or {}
        call["name"] += function.get("name") or ""
        arguments = function.get("arguments") or ""
        call["arguments"] += arguments if isinstance(arguments, str) else json.dumps(arguments)


def _number(value: Any) -> float | None:
    """A figure the engine sent, if it is a number (None: it sent none)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)
