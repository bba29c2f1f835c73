"""The API over one loaded model: routes, and each generation from its queue slot to its last
byte. Independent of the HTTP machinery (`server.py` writes what this returns)."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any, Literal

from gptoss_local.backends.base import (
    Backend,
    BackendError,
    GenerationSettings,
    UnsupportedRequest,
    check_request,
)
from gptoss_local.events import Event
from gptoss_local.serve import sse
from gptoss_local.serve.chat_reply import ChatReply
from gptoss_local.serve.chat_request import chat_job
from gptoss_local.serve.errors import ApiError
from gptoss_local.serve.job import Job
from gptoss_local.serve.limits import Limits
from gptoss_local.serve.responses_reply import ResponsesReply
from gptoss_local.serve.responses_request import responses_job
from gptoss_local.serve.scheduler import Busy, Gone, Scheduler
from gptoss_local.serve.turn import Streamer, Turn

Api = Literal["chat", "responses"]
ROUTES: dict[str, Api] = {"/v1/chat/completions": "chat", "/v1/responses": "responses"}
GONE = 499  # the client closed the connection (nginx's code; only ever logged)


@dataclass
class Answer:
    """What to send: a JSON body, or a stream of server-sent events (which holds the model's
    slot until it is exhausted or closed). `turn` gives the token counts for the log."""

    status: int = 200
    body: dict[str, Any] | None = None
    stream: Iterator[bytes] | None = None
    turn: Turn | None = None


class Service:
    """The routes of the server for one loaded model.

    Args:
        backend: The loaded model.
        names: The model's id (listed by /v1/models), then other names requests may use.
        defaults: Generation settings a request does not set (effort, sampling).
        max_waiting: Requests that may wait while others run; more are answered 503.
        stream: How a reply is asked for; `backend.stream` unless a test steers the model.
    """

    def __init__(
        self,
        backend: Backend,
        names: Sequence[str],
        defaults: GenerationSettings,
        max_waiting: int = 64,
        stream: Streamer | None = None,
    ) -> None:
        self.backend, self.names, self.defaults = backend, tuple(names), defaults
        self.scheduler = Scheduler(max_waiting, backend.capabilities.parallel)
        self._stream: Streamer = stream or backend.stream
        info = backend.info()
        self._engine, self._context = info.backend, info.context_size
        self.limits = Limits(self._context)
        self._created = int(time.time())

    def get(self, path: str) -> Answer:
        """A GET: the model list, one model, or health."""
        if path == "/v1/models":
            return Answer(body={"object": "list", "data": [self._model()]})
        if path.startswith("/v1/models/"):
            name = path.removeprefix("/v1/models/")
            if name not in self.names:
                raise ApiError(404, f"The model {name!r} does not exist here.", "model_not_found")
            return Answer(body=self._model())
        if path == "/health":
            return Answer(body={"status": "ok", "waiting": self.scheduler.waiting})
        raise _no_route(path)

    def post(self, path: str, data: Any, cancel: threading.Event) -> Answer:
        """A POST: a chat completion or a response; `cancel` is set when the client leaves."""
        api = ROUTES.get(path)
        if api is None:
            raise _no_route(path)
        reader = chat_job if api == "chat" else responses_job
        job = reader(data, self.names, self.defaults, self.limits)
        try:  # before it waits for the model: what the engine cannot do is the client's 400
            check_request(self.backend.capabilities, job.request, self._engine)
        except UnsupportedRequest as exc:
            raise _unsupported(exc, api) from None
        stack = ExitStack()
        try:
            stack.enter_context(self.scheduler.slot(cancel))
            turn = Turn(self._stream, job, cancel)
            events = iter(turn)
            first = next(events, None)  # a failure before any output is an HTTP error
        except Busy:
            stack.close()
            raise ApiError(503, "The server is busy: too many requests are waiting. Try again "
                           "shortly.", "server_busy") from None  # fmt: skip
        except Gone:
            stack.close()
            return Answer(status=GONE)
        except BackendError as exc:
            stack.close()
            raise _backend_error(exc) from None
        except BaseException:
            stack.close()
            raise
        output = itertools.chain([first] if first is not None else [], events)
        if not job.stream:
            with stack:
                return Answer(body=_whole(api, job, output, turn), turn=turn)
        return Answer(stream=_streamed(api, job, output, turn, stack), turn=turn)

    def _model(self) -> dict[str, Any]:
        return {"id": self.names[0], "object": "model", "created": self._created,
                "owned_by": "gptoss-local", "max_model_len": self._context}  # fmt: skip


def _whole(api: Api, job: Job, output: Iterable[Event], turn: Turn) -> dict[str, Any]:
    try:
        if api == "chat":
            return ChatReply(job).completion(output, turn)
        return ResponsesReply(job).complete(output, turn)
    except BackendError as exc:
        raise _backend_error(exc) from None


def _streamed(
    api: Api, job: Job, output: Iterable[Event], turn: Turn, stack: ExitStack
) -> Iterator[bytes]:
    with stack:
        pieces: Iterable[dict[str, Any]]
        if api == "chat":
            pieces = ChatReply(job).chunks(output, turn)
            encode: Callable[[dict[str, Any]], bytes] = sse.data_line
        else:
            pieces = ResponsesReply(job).stream(output, turn)
            encode = sse.typed_event
        try:
            for piece in pieces:
                yield encode(piece)
        except BackendError as exc:  # after the headers: the error goes into the stream
            error = _backend_error(exc).body()
            if api == "responses":  # the Responses error event, with the Chat-style body too
                fields = {k: error["error"][k] for k in ("code", "message", "param")}
                error = {"type": "error", **fields, **error}
            yield encode(error)
        if api == "chat":
            yield sse.DONE


def _backend_error(exc: BackendError) -> ApiError:
    if exc.kind == "context_full":
        return ApiError(400, str(exc), "context_length_exceeded", "messages")
    return ApiError(500, f"The model failed: {exc}", exc.kind)


def _unsupported(exc: UnsupportedRequest, api: Api) -> ApiError:
    """A 400 naming the request field the engine refused, as the API spells it."""
    chat = api == "chat"
    params = {"tools": "tools", "builtin_tools": "tools",
              "response_format": "response_format" if chat else "text.format",
              "attachments": "messages" if chat else "input"}  # fmt: skip
    return ApiError(400, str(exc), "unsupported_value", params.get(exc.field))


def _no_route(path: str) -> ApiError:
    return ApiError(404, f"There is no {path} here: this server offers /v1/models, "
                    "/v1/chat/completions and /v1/responses.", "unknown_route")  # fmt: skip
