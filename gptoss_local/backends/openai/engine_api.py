"""The routes a gptoss-local engine (`serve`) offers beside the OpenAI API (`urls.ENGINE_PATH`
and the others), which this client uses when the server it talks to is one (its state answers
as ours): the engine's state (who runs, who waits), a prefill that evaluates a prompt without
answering, and counts by the model's own tokenizer. Their bodies are a Chat Completions
request's, so the prompt the engine evaluates or counts is exactly the one the reply sends."""

from __future__ import annotations

import threading
from typing import Any

from gptoss_local.backends.base import BackendError
from gptoss_local.backends.openai.http import Endpoint, HttpFailure
from gptoss_local.i18n import _
from gptoss_local.urls import COUNT_PATH, ENGINE_OBJECT, ENGINE_PATH, PREFILL_PATH, TOKENIZE_PATH

STATE_SECONDS = 5.0  # an engine answers its state at once, even mid-reply (its own thread)


class OurEngine:
    """A gptoss-local engine behind an `Endpoint`: its own routes, for the client backend.

    Args:
        endpoint: The server's address, key and the client's name.
        state: What its `ENGINE_PATH` answered when the client connected.
    """

    def __init__(self, endpoint: Endpoint, state: dict[str, Any]) -> None:
        self.endpoint, self.first_state = endpoint, state

    @classmethod
    def found(cls, endpoint: Endpoint) -> OurEngine | None:
        """The engine behind `endpoint`, if the server is one of ours (else None)."""
        try:
            state = endpoint.call("GET", ENGINE_PATH, timeout=STATE_SECONDS)
        except (HttpFailure, OSError, ValueError):
            return None
        if not isinstance(state, dict) or state.get("object") != ENGINE_OBJECT:
            return None
        return cls(endpoint, state)

    def state(self) -> dict[str, Any] | None:
        """What the engine holds now and for whom (None when it does not answer)."""
        try:
            state = self.endpoint.call("GET", ENGINE_PATH, timeout=STATE_SECONDS)
        except (HttpFailure, OSError, ValueError):
            return None
        return state if isinstance(state, dict) else None

    def waiting_for(self) -> str | None:
        """Whose reply this client's request waits behind (None when it does not wait)."""
        state = self.state() or {}
        me = self.endpoint.client
        waiting = [h.get("client") for h in state.get("waiting") or () if isinstance(h, dict)]
        running = [h.get("client") for h in state.get("running") or () if isinstance(h, dict)]
        if me not in waiting or not running:
            return None
        others = [str(c) for c in running if c != me]
        return others[0] if others else str(running[0])

    def prefill(self, body: dict[str, Any], cancel: threading.Event | None) -> int:
        """Have the engine evaluate the prompt of the chat request `body` ahead."""
        try:
            answer = self.endpoint.call("POST", PREFILL_PATH, body, cancel)
        except (HttpFailure, OSError, ValueError):
            return 0  # nothing is lost: the reply evaluates its prompt itself
        return int(answer.get("evaluated") or 0) if isinstance(answer, dict) else 0

    def count(self, body: dict[str, Any]) -> int:
        """The prompt of the chat request `body`, counted by the engine's tokenizer."""
        return int(self._asked(COUNT_PATH, body)["tokens"])

    def tokenize(self, text: str, special: bool) -> list[int]:
        """`text` as the engine's token ids."""
        tokens = self._asked(TOKENIZE_PATH, {"text": text, "special": special})["tokens"]
        return [int(t) for t in tokens]

    def _asked(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        error: object = None
        try:
            answer = self.endpoint.call("POST", path, body)
        except HttpFailure as exc:
            error = exc.message()
        except (OSError, ValueError) as exc:
            error = exc
        if error is None and isinstance(answer, dict) and "tokens" in answer:
            return answer
        raise BackendError(
            _("the engine at {url} could not count tokens ({error})").format(
                url=self.endpoint.url, error=error or _("no tokens in its answer")),
            kind="error",
        )  # fmt: skip
