"""The real server on the tiny model for issue 24's features: structured outputs, a forced tool
choice, penalties and logit biases. Two ways to steer the random model:

- `FormatSteering` (STEERING, `format_server`): the test writes the whole reply, the answer's
  JSON included (`ANSWERS`, by the format's name), and the backend is told nothing of the
  format, the tool choice or the penalties (its own grammar would meet the steering's), so
  the tests see exact JSON and exact calls: the server's reading, replies, finish reasons and
  checks. What the backend was asked is recorded in `requests`; `declared` makes the loaded
  engine declare the capabilities the server checks before queueing (a no-op once the
  engine declares them itself). The mismatch test can only be written so: an engine that
  holds the schema never misses it.
- `EngineSteering` (`engine_server`): the test writes only the reasoning (and a call's
  `to=`); the engine's own grammar writes the JSON and picks the call, so
  test_serve_engine_constraint.py checks the engine's constraint end to end.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Generator
from contextlib import AbstractContextManager
from dataclasses import replace
from pathlib import Path

from serve_helpers import Running, Steering, running_server

from gptoss_local.backends.base import (
    Reply,
    ReplyRequest,
    Stats,
    ToolChoice,
)
from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
from gptoss_local.backends.llamacpp.options import LlamaOptions
from gptoss_local.conversation import Conversation
from gptoss_local.events import Event

# The answer the steered model writes, by the format's name ("Weather": the pydantic model's).
ANSWERS = {
    "json_object": '{"ok": true}',
    "Weather": '{"city": "Tokyo", "sunny": true}',
    "weather": '{"city": "Tokyo", "sunny": true}',
    "broken": '{"city": 5}',  # misses the schema: what the engine must never let through
}
FORMAT_GRAMMAR = (
    'root ::= <|channel|> "analysis" <|message|> "Need JSON" <|end|> '
    '<|start|> "assistant" <|channel|> "final" <|message|> ANSWER'
)


def gbnf(text: str) -> str:
    """`text` as a GBNF string literal."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


class FormatSteering(Steering):
    """Steering that answers in JSON when a format is asked for (see the module's docstring),
    and records each request whole and when each reply ended."""

    def __init__(self, backend: LlamaCppBackend) -> None:
        super().__init__(backend)
        self.requests: list[ReplyRequest] = []
        self.ended_at: list[float] = []
        self._format_name: str | None = None

    def __call__(self, request: ReplyRequest, cancel: threading.Event) -> Reply:
        self.requests.append(request)
        fmt = request.response_format
        self._format_name = None if fmt is None else fmt.name
        plain = replace(request, response_format=None, tool_choice=ToolChoice(),
                        settings=replace(request.settings, frequency_penalty=0.0,
                                         presence_penalty=0.0, logit_bias=()))  # fmt: skip
        return self._timed(super().__call__(plain, cancel))

    def _timed(self, reply: Reply) -> Reply:
        def events() -> Generator[Event, None, Stats]:
            try:
                yield from reply
            finally:
                self.ended_at.append(time.monotonic())
            assert reply.stats is not None
            return reply.stats

        return Reply(events())

    def _options(self, conversation: Conversation) -> LlamaOptions:
        last = conversation.messages[-1]
        calling = conversation.tools and last.role != "tool"
        if self._format_name is None or calling:
            return super()._options(conversation)
        answer = gbnf(ANSWERS[self._format_name])
        return replace(self._reply, grammar=FORMAT_GRAMMAR.replace("ANSWER", answer))


def format_server(gguf: Path, sequences: int = 1) -> AbstractContextManager[Running]:
    """The tiny model served on 127.0.0.1, steered by `FormatSteering`."""
    return running_server(gguf, sequences=sequences, steer=FormatSteering)


def loads(text: str | None) -> object:
    """JSON text, parsed (None: not text)."""
    assert text is not None
    return json.loads(text)


# The engine's own constraint: the steering writes only the reasoning (and, for a forced
# call, the start of its header); the engine's grammar writes the answer or the call.
ENGINE_FORMAT_GRAMMAR = (
    'root ::= <|channel|> "analysis" <|message|> "Need JSON" <|end|> '
    '<|start|> "assistant" <|channel|> "final" <|message|> [^<]*'
)
ENGINE_CALL_GRAMMAR = (
    'root ::= <|channel|> "analysis" <|message|> "Need a tool" <|end|> '
    '<|start|> "assistant" <|channel|> "commentary to=" ( [^<] | <|message|> | <|constrain|> )*'
)


class EngineSteering(Steering):
    """Steering that leaves the format and the tool choice to the engine (see above)."""

    def __init__(self, backend: LlamaCppBackend) -> None:
        super().__init__(backend)
        self.requests: list[ReplyRequest] = []
        self._request: ReplyRequest | None = None

    def __call__(self, request: ReplyRequest, cancel: threading.Event) -> Reply:
        self.requests.append(request)
        self._request = request
        return super().__call__(request, cancel)

    def _options(self, conversation: Conversation) -> LlamaOptions:
        request = self._request
        assert request is not None
        if request.tool_choice.forced:
            return replace(self._call, grammar=ENGINE_CALL_GRAMMAR)
        if request.response_format is not None:
            return replace(self._reply, grammar=ENGINE_FORMAT_GRAMMAR)
        return super()._options(conversation)


def engine_holds_formats() -> bool:
    """Whether the llama.cpp engine holds formats and tool choices itself."""
    caps = LlamaCppBackend.capabilities
    return caps.response_format and caps.tool_choice


def engine_server(gguf: Path) -> AbstractContextManager[Running]:
    """The tiny model served on 127.0.0.1, the format and tool choice left to the engine."""
    return running_server(gguf, steer=EngineSteering)
