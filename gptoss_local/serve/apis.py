"""The APIs the server speaks, one object each: how its requests are read, its names for
the fields an engine may refuse, how its replies are written and how its stream is spelled.
`service.py` routes a POST to one of them and asks it for whatever differs; `error_body`
spells an error as the dialect a path belongs to expects it."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any, Protocol

from gptoss_local.backends.base import ReplyRequest
from gptoss_local.events import Event
from gptoss_local.serve import sse
from gptoss_local.serve.anthropic import errors as anthropic_errors
from gptoss_local.serve.anthropic.reply import MessagesReply
from gptoss_local.serve.anthropic.request import MessagesReader
from gptoss_local.serve.api_request import ApiRequest, RequestReader
from gptoss_local.serve.chat_reply import ChatReply
from gptoss_local.serve.chat_request import ChatReader
from gptoss_local.serve.errors import ApiError
from gptoss_local.serve.generation import Generation
from gptoss_local.serve.ollama import reply as ollama_reply
from gptoss_local.serve.ollama import request as ollama_request
from gptoss_local.serve.responses_reply import ResponsesReply
from gptoss_local.serve.responses_request import ResponsesReader

Piece = dict[str, Any]


class ReplyWriter(Protocol):
    """One reply in an API's shape."""

    def whole(self, events: Iterable[Event], generation: Generation) -> Piece:
        """The reply as one JSON object, once the generation has ended."""
        ...

    def pieces(self, events: Iterable[Event], generation: Generation) -> Iterator[Piece]:
        """The reply as the objects of its stream."""
        ...


def _as_it_is(error: Piece) -> Piece:
    return error


@dataclass(frozen=True)
class Api:
    """One API.

    Attributes:
        reader: Reads its requests.
        reply: Writes the reply to a request.
        encode: One object of its stream as a server-sent event.
        closing: What its stream sends after the last event.
        error_piece: The object that tells its stream the generation failed, from the
            error's JSON body.
        content_type: The media type of its stream.
    """

    reader: RequestReader
    reply: Callable[[ApiRequest], ReplyWriter]
    encode: Callable[[Piece], bytes]
    closing: tuple[bytes, ...] = ()
    error_piece: Callable[[Piece], Piece] = _as_it_is
    content_type: str = "text/event-stream"

    def param_of(self, field: str, request: ReplyRequest | None = None) -> str | None:
        """The request's field for `field` of the `ReplyRequest` (`UnsupportedRequest.
        field`), which an engine refused; `request` tells which penalty was asked for."""
        reader = self.reader
        penalty = "frequency_penalty"
        if request is not None and not request.settings.frequency_penalty:
            penalty = "presence_penalty"
        names = {"tools": "tools", "builtin_tools": "tools",
                 "response_format": reader.format_param, "attachments": reader.param,
                 "tool_choice": "tool_choice", "penalties": penalty,
                 "logit_bias": "logit_bias"}  # fmt: skip
        return names.get(field)


def _responses_error(error: Piece) -> Piece:
    # The Responses error event, with the Chat-style body too.
    fields = {key: error["error"][key] for key in ("code", "message", "param")}
    return {"type": "error", **fields, **error}


CHAT_COMPLETIONS = Api(ChatReader(), ChatReply, sse.data_line, closing=(sse.DONE,))
RESPONSES = Api(ResponsesReader(), ResponsesReply, sse.typed_event, error_piece=_responses_error)
MESSAGES = Api(MessagesReader(), MessagesReply, sse.typed_event,
               error_piece=anthropic_errors.error_event)  # fmt: skip
NDJSON = "application/x-ndjson"
OLLAMA_CHAT = Api(ollama_request.ChatReader(), ollama_reply.ChatReply, ollama_reply.ndjson,
                  error_piece=ollama_reply.error_piece, content_type=NDJSON)  # fmt: skip
OLLAMA_GENERATE = replace(OLLAMA_CHAT, reader=ollama_request.GenerateReader(),
                          reply=ollama_reply.GenerateReply)  # fmt: skip
ROUTES: dict[str, Api] = {
    "/v1/chat/completions": CHAT_COMPLETIONS,
    "/v1/responses": RESPONSES,
    "/v1/messages": MESSAGES,  # Anthropic's Messages API
    "/api/chat": OLLAMA_CHAT,
    "/api/generate": OLLAMA_GENERATE,
}


ErrorBody = Callable[[ApiError], Piece]
ERROR_BODIES: tuple[tuple[str, ErrorBody], ...] = (
    ("/v1/messages", anthropic_errors.body),
    ("/api/", lambda error: {"error": error.message}),  # Ollama's
)
"""Path prefixes whose dialect spells errors otherwise than OpenAI's `{"error": {...}}`."""


def error_body(path: str, error: ApiError) -> Piece:
    """The JSON body of `error` as the dialect of `path` spells it."""
    for prefix, body in ERROR_BODIES:
        if path.startswith(prefix):
            return body(error)
    return error.body()
