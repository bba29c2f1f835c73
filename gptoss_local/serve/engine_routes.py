"""The engine's own routes beside the APIs (`backends.openai.engine_api`), which the chat uses
over a shared engine: a prefill and the tokenizer's counts.

A prefill is work nobody waits for, so it gives way: it runs only when no reply runs or waits
(it takes the queue's slot only if the slot is free at once), stops as soon as a reply comes
to wait behind it, and never loads a model that was let go (`ResidentBackend.prefill`). The
counts use the model's tokenizer (loading the model if need be, as a reply would).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from gptoss_local.backends.base import Backend, BackendError, ReplyRequest
from gptoss_local.serve.errors import ApiError, bad_request
from gptoss_local.serve.resident import ResidentBackend
from gptoss_local.serve.scheduler import Scheduler

YIELD_POLL_SECONDS = 0.05  # how often a prefill looks whether a reply waits behind it


def prefill(
    backend: Backend,
    scheduler: Scheduler,
    request: ReplyRequest,
    cancel: threading.Event,
    client: str = "",
) -> dict[str, Any]:
    """Evaluate `request`'s prompt into the cache when the engine is idle; the answer's body
    (`evaluated`: 0 when it gave way, or the model is not loaded, or cannot prefill)."""
    evaluated = 0
    if backend.capabilities.prefill:
        with scheduler.try_slot() as free:
            if free:
                with _held(backend, client, cancel), _yielding(scheduler, cancel):
                    evaluated = _evaluate(backend, request, cancel)
    return {"object": "gptoss-local.prefill", "evaluated": evaluated}


def count(backend: Backend, request: ReplyRequest) -> dict[str, Any]:
    """The body of the count's answer: the prompt's tokens by the model's tokenizer."""
    if not backend.capabilities.tokenizer:
        raise ApiError(501, "This engine keeps its tokenizer to itself.", "no_tokenizer")
    try:
        return {"object": "gptoss-local.count", "tokens": backend.count_prompt(request)}
    except BackendError as exc:
        raise ApiError(500, f"The model failed to count: {exc}", exc.kind) from None


def tokenize(backend: Backend, data: Any) -> dict[str, Any]:
    """The body of the tokenize answer for `{"text": ..., "special": bool}`."""
    if not isinstance(data, dict) or not isinstance(data.get("text"), str):
        raise bad_request("text must be a string", "text")
    special = data.get("special", True)
    if not isinstance(special, bool):
        raise bad_request("special must be true or false", "special")
    if not backend.capabilities.tokenizer:
        raise ApiError(501, "This engine keeps its tokenizer to itself.", "no_tokenizer")
    try:
        return {"object": "gptoss-local.tokens", "tokens": backend.tokenize(data["text"], special)}
    except BackendError as exc:
        raise ApiError(500, f"The model failed to tokenize: {exc}", exc.kind) from None


def _evaluate(backend: Backend, request: ReplyRequest, cancel: threading.Event) -> int:
    try:
        return backend.prefill(request, cancel)
    except BackendError:
        return 0  # nothing is lost: the reply evaluates its prompt itself and says what fails


@contextmanager
def _held(backend: Backend, client: str, cancel: threading.Event) -> Iterator[None]:
    """Keep a resident model from unloading under the prefill (shown running for `client`),
    its keep-alive left as the last request set it; a switch of the model stops it
    (`cancel`) rather than wait for it or be refused."""
    if not isinstance(backend, ResidentBackend):
        yield
        return
    with backend.hold(backend.keep_alive, client) as holder:
        holder.running, holder.gives_way = True, cancel
        yield


@contextmanager
def _yielding(scheduler: Scheduler, cancel: threading.Event) -> Iterator[None]:
    """Set `cancel` as soon as a request waits for the slot the prefill holds."""
    done = threading.Event()

    def watch() -> None:
        while not done.wait(YIELD_POLL_SECONDS):
            if scheduler.waiting:
                cancel.set()
                return

    thread = threading.Thread(target=watch, name="prefill-yield", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
