"""One request run on the backend: its events with stop strings applied, then its stats.

Two things about how a reply ended are settled here for both APIs. A tool call the token
limit cut off (the parser hands it over with an error, and the turn ends "truncated") is not
a call: it is left out of the reply, whose finish reason is then "length", so that no client
runs a call with half its arguments. And an answer asked for in a format (`ResponseFormat`)
is checked against it once it is whole (`formats.check_answer`); an answer cut short (the
token limit, a stop string) is not checked: its finish reason says it is not whole.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Literal

from gptoss_local.backends.base import Reply, ReplyRequest, Stats
from gptoss_local.events import AnswerDelta, Event, ToolCall, TurnEnded
from gptoss_local.serve.api_request import ApiRequest
from gptoss_local.serve.formats import check_answer
from gptoss_local.serve.stops import StopFilter

# How the server asks the backend for a reply: `Backend.stream`, or a test's steering.
Streamer = Callable[[ReplyRequest, threading.Event], Reply]
Finish = Literal["stop", "length", "tool_calls"]
CUT_SHORT = ("length", "context_full")  # stop reasons of a reply the token limit ended


class Generation:
    """The reply to one request as it is generated. Iterate for its text and tool calls (no
    `TurnEnded`); `stats` and `finish` are set once it has ended. A stop string ends the
    answer where it begins: the generation is cancelled and the finish reason is "stop"."""

    def __init__(self, stream: Streamer, asked: ApiRequest, cancel: threading.Event) -> None:
        self.cancel = cancel
        self.started = time.monotonic_ns()  # for replies that tell their whole duration
        self._format = asked.request.response_format
        self._stops = StopFilter(asked.stops)
        self._reply = stream(asked.request, cancel)
        self._answer: list[str] = []
        self.stats: Stats | None = None
        self.called = False

    def __iter__(self) -> Iterator[Event]:
        held: ToolCall | None = None  # a call, until it is known not to be cut off
        truncated = False
        for event in self._reply:
            if isinstance(event, TurnEnded):
                truncated = event.reason == "truncated"
                continue
            if self._stops.matched:
                continue  # after a stop string nothing more is sent; the reply ends soon
            if held is not None:
                yield self._called(held)
                held = None
            if isinstance(event, AnswerDelta):
                yield from self._answered(self._stops.feed(event.text))
                if self._stops.matched:
                    self.cancel.set()
            elif isinstance(event, ToolCall):
                held = event
            else:
                yield event
        yield from self._answered(self._stops.flush())
        self.stats = self._reply.stats
        if held is not None and not (held.error and (truncated or self._cut_short)):
            yield self._called(held)
        self._check()

    @property
    def finish(self) -> Finish:
        """Why the reply ended, as the OpenAI APIs say it."""
        if self._stops.matched:
            return "stop"
        if self.called:
            return "tool_calls"
        return "length" if self._cut_short else "stop"

    @property
    def stop_sequence(self) -> str | None:
        """The stop string that ended the answer (None when none did)."""
        return self._stops.found

    @property
    def _cut_short(self) -> bool:
        return self.stats is not None and self.stats.stop_reason in CUT_SHORT

    def _answered(self, text: str) -> Iterator[Event]:
        if text:
            self._answer.append(text)
            yield AnswerDelta(text)

    def _called(self, call: ToolCall) -> ToolCall:
        self.called = True
        return call

    def _check(self) -> None:
        """Hold a whole answer to the format asked for (see the module's docstring)."""
        if self._format is None or self.finish != "stop" or self._stops.matched:
            return
        if self.stats is not None and self.stats.stop_reason == "cancelled":
            return  # the client left: nobody reads it
        check_answer("".join(self._answer), self._format)
