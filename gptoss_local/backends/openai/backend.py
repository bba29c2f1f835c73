"""The OpenAI-compatible client backend: gpt-oss served elsewhere, through /v1/chat/completions.

Any server of the OpenAI API that runs gpt-oss will do: another PC's `gptoss-local serve`,
llama.cpp's llama-server, Ollama's /v1, vLLM. Reasoning arrives as `reasoning_content` (or
`reasoning`, as Ollama and newer vLLM name it) and becomes `ReasoningDelta`, content becomes
`AnswerDelta`, streamed tool call fragments become one `ToolCall` each, and `usage` the stats.
The model is the server's: `--model` picks one when it serves several.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Generator
from dataclasses import replace
from typing import Any

from gptoss_local.backends.base import (
    BackendError,
    BackendInfo,
    Capabilities,
    Reply,
    ReplyRequest,
    ServedElsewhere,
    Stats,
    StopReason,
    check_request,
    no_tokenizer,
)
from gptoss_local.backends.openai.engine_api import OurEngine
from gptoss_local.backends.openai.http import Endpoint, HttpFailure
from gptoss_local.backends.openai.messages import chat_body
from gptoss_local.backends.openai.reading import Reading
from gptoss_local.events import (
    Event,
    TurnEnded,
    TurnEndReason,
)
from gptoss_local.i18n import _

FINISH: dict[str, StopReason] = {"stop": "return", "tool_calls": "call", "length": "length"}
_TURN_ENDS: dict[str, TurnEndReason] = {"call": "call", "return": "return"}


class OpenAIClientBackend(ServedElsewhere):
    """A chat server reached over HTTP.

    Args:
        base_url: The server's API address, with its /v1 (added when the URL has no path).
        model: The model to use, an id the server lists or a part of one ("20b"); None takes
            the server's only (or only gpt-oss) model.
        api_key: Sent as `Authorization: Bearer KEY`.
        client: Who asks, sent as `X-Client-Name` (a gptoss-local engine shows it in `ps`).

    Raises:
        BackendError: the server cannot be reached, refuses the key, or has no such model.
    """

    engine = "openai"

    # The server keeps its own prompt cache; the API cannot evaluate without answering. Its
    # tools are functions: gpt-oss's built-ins have no place in a Chat Completions request
    # (our own engine takes them, and namespaces, in a field of ours: `messages.chat_body`).
    # A response format, a tool choice, penalties and logit biases are fields of the request
    # and go to the server, which holds the reply to them (or refuses the request: a server
    # that cannot answers an error, never taken for a reply).
    capabilities = Capabilities(
        prefill=False, tools=True, response_format=True, tool_choice=True, penalties=True,
        logit_bias=True,
    )  # fmt: skip

    def __init__(
        self,
        base_url: str,
        model: str | None = None,
        api_key: str | None = None,
        client: str = "",
    ) -> None:
        self.endpoint = Endpoint(base_url, api_key, client)
        listed = models_apart(self._models())
        self.model = choose_model([str(m.get("id")) for m in listed], model, self.endpoint.url)
        entry = next(m for m in listed if str(m.get("id")) == self.model)
        self.context = _context_of(entry)
        # A gptoss-local engine (`serve`) evaluates ahead and counts with its tokenizer
        # through routes of its own, as far as its model can.
        self.ours = OurEngine.found(self.endpoint)
        if self.ours is not None:
            state = self.ours.first_state
            # The built-ins and namespaces travel in our field (`chat_body`), to an engine
            # whose model can be shown them (one that reads the field says so).
            self.capabilities = replace(
                self.capabilities, prefill=state.get("prefill") is True,
                tokenizer=state.get("tokenizer") is True,
                builtin_tools=state.get("builtin_tools") is True,
                namespaces=state.get("namespaces") is True,
            )  # fmt: skip

    def info(self) -> BackendInfo:
        """The server's model, and where it runs (a shared engine of this machine says so)."""
        where = f"server at {self.endpoint.host}"
        if self.ours is not None:
            where = _("shared engine at {host}").format(host=self.endpoint.host)
        details = {"server": self.endpoint.url}
        return BackendInfo(
            "openai", self.model, where, self.context, details, self.ours is not None
        )

    def waiting_for(self) -> str | None:
        """Whose reply ours waits behind on our engine (`Queued`; None from another server)."""
        return self.ours.waiting_for() if self.ours is not None else None

    def engine_alive(self) -> bool:
        """Whether our engine still answers (`Queued`; a server not ours is taken as it is)."""
        return self.ours is None or self.ours.state() is not None

    def prefill(self, request: ReplyRequest, cancel: threading.Event | None = None) -> int:
        """Have our engine evaluate the prompt ahead (0 where the server cannot)."""
        if self.ours is None or not self.capabilities.prefill:
            return 0
        return self.ours.prefill(self._body(request), cancel)

    def count_prompt(self, request: ReplyRequest) -> int:
        """The prompt's tokens by our engine's tokenizer (`capabilities.tokenizer`)."""
        if self.ours is None or not self.capabilities.tokenizer:
            raise no_tokenizer(self.engine)
        return self.ours.count(self._body(request))

    def tokenize(self, text: str, special: bool = True) -> list[int]:
        """`text` as our engine's token ids (`capabilities.tokenizer`)."""
        if self.ours is None or not self.capabilities.tokenizer:
            raise no_tokenizer(self.engine)
        return self.ours.tokenize(text, special)

    def stream(self, request: ReplyRequest, cancel: threading.Event | None = None) -> Reply:
        """The assistant's next turn (see `Backend.stream`)."""
        check_request(self.capabilities, request, "openai")
        return Reply(self._generate(request, cancel))

    def close(self) -> None:
        """Nothing to free: the model stays loaded on its server."""

    def _body(self, request: ReplyRequest) -> dict[str, Any]:
        return chat_body(self.model, request, ours=self.ours is not None)

    def _models(self) -> list[dict[str, Any]]:
        url = self.endpoint.url
        try:
            listed = self.endpoint.get("/models")
        except HttpFailure as exc:
            raise _refusal(exc, url) from None
        except (OSError, ValueError) as exc:
            raise BackendError(
                _("cannot reach the chat server at {url} ({error})").format(url=url, error=exc),
                _(
                    "Check the address and that the server runs there (on that PC: "
                    "`gptoss-local serve --host 0.0.0.0 --api-key KEY`)."
                ),
                kind="load_failed",
            ) from None
        data = listed.get("data") if isinstance(listed, dict) else None
        if not isinstance(data, list) or not all(isinstance(m, dict) for m in data):
            raise BackendError(_("{url}/models did not list models: is it an OpenAI-compatible "
                                 "server?").format(url=url), kind="load_failed")  # fmt: skip
        return data

    def _generate(
        self, request: ReplyRequest, cancel: threading.Event | None
    ) -> Generator[Event, None, Stats]:
        started = time.monotonic()
        if cancel is not None and cancel.is_set():
            yield TurnEnded("truncated")
            return Stats(stop_reason="cancelled", context_size=self.context)
        reading = Reading()
        body = self._body(request)
        url = self.endpoint.url
        broken: str | None = None
        try:
            for chunk in self.endpoint.stream("/chat/completions", body, cancel):
                yield from reading.chunk(chunk)
        except HttpFailure as exc:
            raise _refusal(exc, url) from None
        except (OSError, ValueError) as exc:  # a cancel shuts the socket: not a failure then
            broken = _("the stream from {url} broke off ({error})").format(url=url, error=exc)
        if reading.finish is not None:  # a cut call is no call
            yield from reading.calls()
        cancelled = cancel is not None and cancel.is_set() and reading.finish is None
        if reading.finish is None and not cancelled:
            yield TurnEnded("truncated")
            why = broken or _("the stream from {url} ended without a finish reason").format(url=url)
            raise BackendError(why, _("The reply is incomplete."), kind="stream_broken")
        reason: StopReason = "cancelled"
        if not cancelled:
            reason = FINISH.get(reading.finish or "", "return")
        yield TurnEnded(_TURN_ENDS.get(reason, "truncated"))
        return reading.stats(started, reason, self.context)


def models_apart(listed: list[dict]) -> list[dict]:
    """The models a server lists, less the other names gptoss-local's serve lists a model
    under (`alias_of` its id: "gpt-oss:20b" beside "gpt-oss-20b"), which are the same model."""
    return [m for m in listed if not m.get("alias_of")]


def choose_model(ids: list[str], wanted: str | None, url: str) -> str:
    """The server's model: `wanted` exactly, else the one id that holds its words in a row
    ("20b" and "gpt-oss-20b" find "gpt-oss:20b", not "gpt-oss:120b"); without `wanted`, the
    only model, or the only gpt-oss one."""
    if wanted in ids:
        return str(wanted)
    if wanted:
        found = [i for i in ids if _holds(_words(i), _words(wanted))]
    else:
        found = ids if len(ids) == 1 else [i for i in ids if _holds(_words(i), ["gpt", "oss"])]
    if len(found) == 1:
        return found[0]
    listed = ", ".join(ids) or _("none")
    if wanted:
        message = _("{url} serves no single model matching {wanted!r} (it lists: {listed})")
    else:
        message = _("{url} serves several models (it lists: {listed})")
    raise BackendError(message.format(url=url, wanted=wanted, listed=listed),
                       _("Name one with --model."), kind="load_failed")  # fmt: skip


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _holds(words: list[str], part: list[str]) -> bool:
    return bool(part) and any(
        words[i : i + len(part)] == part for i in range(len(words) - len(part) + 1)
    )


def _context_of(entry: dict[str, Any]) -> int:
    """The context size a /models entry states, under the names servers use; 0 if none."""
    meta = entry.get("meta")
    meta = meta if isinstance(meta, dict) else {}
    for value in (entry.get("max_model_len"), entry.get("context_length"), meta.get("n_ctx")):
        if isinstance(value, int) and value > 0:
            return value
    return 0


def _refusal(exc: HttpFailure, url: str) -> BackendError:
    """A server's error answer as a BackendError that says what to do."""
    message = exc.message()
    if exc.status == 401:
        return BackendError(_("{url} refused the key ({message})").format(url=url, message=message),
                            _("Give the server's key with --server-key or OPENAI_API_KEY."),
                            kind="load_failed")  # fmt: skip
    if exc.status == 404 and _error_code(exc) == "model_not_found":
        return BackendError(
            _("{url} no longer holds this chat's model ({message})").format(
                url=url, message=message),
            _("Another program may have switched the engine's model. Choose the model again "
              "(F9 in the chat offers to switch the engine back), or start the chat again."),
            kind="error",
        )  # fmt: skip
    if exc.status == 400 and "context" in message.lower():
        return BackendError(f"{url}: {message}", _("Start a new chat."), kind="context_full")
    return BackendError(
        _("{url} answered HTTP {status}: {message}").format(
            url=url, status=exc.status, message=message
        ),
        kind="error",
    )


def _error_code(exc: HttpFailure) -> str | None:
    error = exc.body.get("error")
    return error.get("code") if isinstance(error, dict) else None
