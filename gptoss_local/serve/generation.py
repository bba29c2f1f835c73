"""One request run on the backend: its events with stop strings applied, then its stats."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Literal

from gptoss_local.backends.base import Reply, ReplyRequest, Stats
from gptoss_local.events import AnswerDelta, Event, ToolCall, TurnEnded
from gptoss_local.serve.api_request import ApiRequest
from gptoss_local.serve.stops import StopFilter

# How the server asks the backend for a reply: `Backend.stream`, or a test's steering.
Streamer = Callable[[ReplyRequest, threading.Event], Reply]
Finish = Literal["stop", "length", "tool_calls"]


class Generation:
    """The reply to one request as it is generated. Iterate for its text and tool calls (no
    `TurnEnded`); `stats` and `finish` are set once it has ended. A stop string ends the
    answer where it begins: the generation is cancelled and the finish reason is "stop"."""

    def __init__(self, stream: Streamer, asked: ApiRequest, cancel: threading.Event) -> None:
        self.cancel = cancel
        self._stops = StopFilter(asked.stops)
        self._reply = stream(asked.request, cancel)
        self.stats: Stats | None = None
        self.called = False

    def __iter__(self) -> Iterator[Event]:
        for event in self._reply:
            if self._stops.matched or isinstance(event, TurnEnded):
                continue  # after a stop string nothing more is sent; the reply ends soon
            if isinstance(event, AnswerDelta):
                text = self._stops.feed(event.text)
                if self._stops.matched:
                    self.cancel.set()
                if text:
                    yield AnswerDelta(text)
                continue
            self.called = self.called or isinstance(event, ToolCall)
            yield event
        rest = self._stops.flush()
        if rest:
            yield AnswerDelta(rest)
        self.stats = self._reply.stats

    @property
    def finish(self) -> Finish:
        """Why the reply ended, as the OpenAI APIs say it."""
        if self._stops.matched:
            return "stop"
        if self.called:
            return "tool_calls"
        reason = self.stats.stop_reason if self.stats else "end_of_stream"
        return "length" if reason in ("length", "context_full") else "stop"
