"""The API over one loaded model: routes, and each generation from its queue slot to its last
byte. Independent of the HTTP machinery (`server.py` writes what this returns)."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

from gptoss_local.backends.base import (
    Backend,
    BackendError,
    GenerationSettings,
    ReplyRequest,
    UnsupportedRequest,
    check_request,
)
from gptoss_local.events import Event
from gptoss_local.serve import engine_routes
from gptoss_local.serve.anthropic import count
from gptoss_local.serve.api_request import ApiRequest
from gptoss_local.serve.apis import ROUTES, Api
from gptoss_local.serve.errors import ApiError
from gptoss_local.serve.generation import Generation, Streamer
from gptoss_local.serve.limits import Limits
from gptoss_local.serve.model_names import accepts, listed
from gptoss_local.serve.ollama.routes import OllamaRoutes, Plain
from gptoss_local.serve.resident import ResidentBackend
from gptoss_local.serve.scheduler import Busy, Gone, Scheduler
from gptoss_local.serve.switch import Choice, Switcher
from gptoss_local.serve.switch import resolve as resolve_switch
from gptoss_local.serve.switch import swap as swap_model
from gptoss_local.urls import (
    COUNT_PATH,
    ENGINE_OBJECT,
    ENGINE_PATH,
    TOKENIZE_PATH,
)

GONE = 499  # the client closed the connection (nginx's code; only ever logged)
CONTEXT_ADVICE = (
    "Shorten the conversation (leave out or summarise earlier messages), or restart the "
    "server with a larger --context."
)


@dataclass(frozen=True)
class Asked:
    """A request read and accepted (`Service.ask`), and the API it came through."""

    api: Api
    request: ApiRequest


@dataclass
class Answer:
    """What to send: a JSON body, a text, or a stream of server-sent events (which holds the
    model's slot until it is exhausted or closed). `generation` gives the token counts for the
    log."""

    status: int = 200
    body: dict[str, Any] | None = None
    text: str | None = None
    stream: Iterator[bytes] | None = None
    generation: Generation | None = None
    content_type: str = "text/event-stream"


class Service:
    """The routes of the server for one loaded model.

    Args:
        backend: The loaded model.
        names: The model's id (listed by /v1/models), then other names requests may use
            (the engine's name for the model, from the file, is accepted too; and any
            spelling of the same gpt-oss model, see `model_names`).
        defaults: Generation settings a request does not set (effort, sampling).
        max_waiting: Requests that may wait while others run; more are answered 503.
        stream: How a reply is asked for; `backend.stream` unless a test steers the model.
        instance: This server's id (its runtime file's), which `ENGINE_PATH` answers.
        switcher: Resolves the model a switch asks for (`serve.switch`); None: no switches.
    """

    def __init__(
        self,
        backend: Backend,
        names: Sequence[str],
        defaults: GenerationSettings,
        max_waiting: int = 64,
        stream: Streamer | None = None,
        instance: str = "",
        switcher: Switcher | None = None,
    ) -> None:
        self.backend = backend
        self.scheduler = Scheduler(max_waiting, backend.capabilities.parallel)
        self._stream: Streamer = stream or backend.stream
        self._created = int(time.time())
        self.instance, self.switcher = instance, switcher
        self._take(names, defaults)

    def _take(self, names: Sequence[str], defaults: GenerationSettings) -> None:
        """Serve the backend's model under `names` (at the start, and after a switch)."""
        info = self.backend.info()
        self.defaults = defaults
        self.names = tuple(dict.fromkeys(filter(None, (*names, info.model))))
        self._engine, self._context = info.backend, info.context_size
        self.limits = Limits(self._context)
        self.listed = listed(self.names)  # the names model lists show
        self.ollama = OllamaRoutes(self.names, self.listed, self.backend, self._context)

    def get(self, path: str) -> Answer:
        """A GET: the model list, one model, health, or Ollama's routes."""
        if path == "/v1/models":
            return Answer(body={"object": "list", "data": [self._model(n) for n in self.listed]})
        if path.startswith("/v1/models/"):
            name = path.removeprefix("/v1/models/")
            if not accepts(name, self.names):
                raise ApiError(404, f"The model {name!r} does not exist here.", "model_not_found")
            return Answer(body=self._model(name if name in self.listed else self.names[0]))
        if path == "/health":
            return Answer(body={"status": "ok", "waiting": self.scheduler.waiting})
        if path == ENGINE_PATH:
            return Answer(body=self.engine_state())
        return _plain(self.ollama.get(path), path)

    def plain(self, method: str, path: str, data: Any) -> Answer | None:
        """A POST or DELETE answered without generating, so without waiting for the model
        (Anthropic's count_tokens, Ollama's model routes); None for the others, which `ask`
        reads."""
        if method == "POST" and path == COUNT_PATH:
            return Answer(body=engine_routes.count(self.backend, self._chat_request(data)))
        if method == "POST" and path == TOKENIZE_PATH:
            return Answer(body=engine_routes.tokenize(self.backend, data))
        if method == "POST" and path == count.PATH:
            names, defaults, limits = self.names, self.defaults, self.limits
            return Answer(body=count.count_tokens(self.backend, data, names, defaults, limits))
        found = self.ollama.post(method, path, data)
        return None if found is None else _plain(found, path)

    def post(self, path: str, data: Any, cancel: threading.Event) -> Answer:
        """A POST: a chat completion or a response; `cancel` is set when the client leaves."""
        return self.answer(self.ask(path, data), cancel)

    def prefill(self, data: Any, cancel: threading.Event, client: str = "") -> Answer:
        """Our `PREFILL_PATH`: a chat request's prompt evaluated ahead, when the engine is idle
        (`engine_routes.prefill`); `cancel` is set when the client leaves."""
        request = self._chat_request(data)
        return Answer(body=engine_routes.prefill(self.backend, self.scheduler, request, cancel,
                                                 client))  # fmt: skip

    def switch(self, data: Any) -> Answer:
        """Our `SWITCH_PATH`: hold the model the body names instead (`serve.switch`); the
        answer is the engine's state then, `switched` false when it held that model already."""
        choice = resolve_switch(self.switcher, self.backend, data)
        former = self.names[0]
        if choice.names[0] != former:
            assert isinstance(self.backend, ResidentBackend)  # `resolve_switch` checked it
            swap_model(self.backend, choice, lambda: self._switched(choice))
        return Answer(body={**self.engine_state(), "switched": choice.names[0] != former,
                            "previous": former})  # fmt: skip

    def _switched(self, choice: Choice) -> None:
        self._take(choice.names, choice.generation)
        if self.switcher is not None:
            self.switcher.switched(choice)

    def _chat_request(self, data: Any) -> ReplyRequest:
        """The request a Chat Completions body asks (our routes take its body)."""
        reader = ROUTES["/v1/chat/completions"].reader
        return reader.read(data, self.names, self.defaults, self.limits).request

    def ask(self, path: str, data: Any) -> Asked:
        """A POST's request, read and held against the engine: what the engine cannot do is
        the client's 400, before the request waits for the model (see `answer`)."""
        api = ROUTES.get(path)
        if api is None:
            raise _no_route(path)
        asked = api.reader.read(data, self.names, self.defaults, self.limits)
        try:
            check_request(self.backend.capabilities, asked.request, self._engine)
        except UnsupportedRequest as exc:  # named as the API names the field
            param = api.param_of(exc.field, asked.request)
            raise ApiError(400, str(exc), "unsupported_value", param) from None
        return Asked(api, asked)

    def answer(self, asked: Asked, cancel: threading.Event, client: str = "") -> Answer:
        """Run a request `ask` accepted: wait for the model, then the reply (a JSON body once
        it has ended, or a stream that holds the model until it is exhausted). `client` names
        who asked (`engine_state` shows it)."""
        api, request = asked.api, asked.request
        stack = ExitStack()
        try:
            holder = None
            if isinstance(self.backend, ResidentBackend):  # held while it waits, too
                holder = stack.enter_context(self.backend.hold(request.keep_alive, client))
            stack.enter_context(self.scheduler.slot(cancel))
            if holder is not None:
                holder.running = True
            generation = Generation(self._stream, request, cancel)
            events = iter(generation)
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
            raise _backend_error(exc, api, request.request) from None
        except BaseException:
            stack.close()
            raise
        output = itertools.chain([first] if first is not None else [], events)
        if not request.stream:
            with stack:
                return Answer(body=_whole(api, request, output, generation), generation=generation)
        streamed = _streamed(api, request, output, generation, stack)
        return Answer(stream=streamed, generation=generation, content_type=api.content_type)

    def engine_state(self) -> dict[str, Any]:
        """This server as `ENGINE_PATH` tells it: its id, model, and what is loaded for whom."""
        info = self.backend.info()
        state: dict[str, Any] = {"loaded": True, "loading": False, "loads": 1, "memory": {},
                                 "keep_alive": -1, "expires_at": None, "running": [],
                                 "waiting": []}  # fmt: skip
        if isinstance(self.backend, ResidentBackend):
            state = self.backend.state()
        capabilities = self.backend.capabilities  # what our own routes can do for a client
        return {"object": ENGINE_OBJECT, "instance": self.instance,
                "model": self.names[0], "names": list(self.names), "engine": info.backend,
                "context": self._context, "prefill": capabilities.prefill,
                "tokenizer": capabilities.tokenizer, "builtin_tools": capabilities.builtin_tools,
                "namespaces": capabilities.namespaces, **state}  # fmt: skip

    def _model(self, name: str) -> dict[str, Any]:
        model = {"id": name, "object": "model", "created": self._created,
                 "owned_by": "gptoss-local", "max_model_len": self._context}  # fmt: skip
        if name != self.names[0]:  # another name for it, which a client can tell apart
            model["alias_of"] = self.names[0]
        return model


def _whole(
    api: Api, asked: ApiRequest, output: Iterable[Event], generation: Generation
) -> dict[str, Any]:
    try:
        return api.reply(asked).whole(output, generation)
    except BackendError as exc:
        raise _backend_error(exc, api, asked.request) from None


def _streamed(
    api: Api, asked: ApiRequest, output: Iterable[Event], generation: Generation, stack: ExitStack
) -> Iterator[bytes]:
    with stack:
        try:
            for piece in api.reply(asked).pieces(output, generation):
                yield api.encode(piece)
        except BackendError as exc:  # after the headers: the error goes into the stream
            yield api.encode(api.error_piece(_backend_error(exc, api, asked.request).body()))
        except ApiError as exc:  # an answer that misses its format (`formats.mismatch`)
            yield api.encode(api.error_piece(exc.body()))
        yield from api.closing


def _backend_error(exc: BackendError, api: Api, request: ReplyRequest) -> ApiError:
    if exc.kind == "context_full":  # the engine's words, and what an API client can do
        return ApiError(400, f"{exc.args[0]} {CONTEXT_ADVICE}", "context_length_exceeded",
                        api.reader.param)  # fmt: skip
    if isinstance(exc, UnsupportedRequest):  # what only the engine could tell (a schema)
        param = api.param_of(exc.field, request)
        return ApiError(400, str(exc), "unsupported_value", param)
    return ApiError(500, f"The model failed: {exc}", exc.kind)


def _plain(found: Plain | None, path: str) -> Answer:
    if found is None:
        raise _no_route(path)
    return Answer(status=found.status, body=found.body, text=found.text)


def _no_route(path: str) -> ApiError:
    return ApiError(404, f"There is no {path} here: this server offers /v1/models, "
                    "/v1/chat/completions, /v1/responses, /v1/messages and Ollama's /api/*.",
                    "unknown_route")  # fmt: skip
