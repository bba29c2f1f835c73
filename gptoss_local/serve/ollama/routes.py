"""The routes of Ollama's API that generate nothing: liveness, the version, the model's
listings, and what this server does instead of managing models.

`serve` has one model (loaded on demand and let go when idle, `resident.py`: an empty chat or
generate loads it, or with `keep_alive` 0 lets it go, and /api/ps lists it only while it is
loaded), and never reaches the network on its own: a
pull of the served model (any of its names) succeeds at once, since it is here; a pull of
another is refused with what to run instead; deleting a model, creating, copying or pushing
one, and blobs are refused, as are embeddings (gpt-oss makes none).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gptoss_local.backends.base import Backend
from gptoss_local.serve.errors import ApiError, bad_request
from gptoss_local.serve.fields import Body, model_name
from gptoss_local.serve.model_names import accepts
from gptoss_local.serve.ollama import options
from gptoss_local.serve.ollama.model import ModelCard
from gptoss_local.serve.ollama.reply import now
from gptoss_local.serve.resident import ResidentBackend

RUNNING = "Ollama is running"
# Reported by /api/version: gpt-oss's clients want 0.11 or newer; below 0.14, from which Ollama
# also speaks Anthropic's Messages API, which this version does not claim.
VERSION = "0.13.5"
ONE_MODEL = "gptoss-local serves the one model it was started with"
REFUSED = {
    "/api/embed": "gpt-oss makes no embeddings; use an embedding model elsewhere",
    "/api/embeddings": "gpt-oss makes no embeddings; use an embedding model elsewhere",
    "/api/create": f"{ONE_MODEL}; it creates no models",
    "/api/copy": f"{ONE_MODEL}; it copies no models (it already answers to {{names}})",
    "/api/push": f"{ONE_MODEL}; it pushes no models anywhere",
}


@dataclass(frozen=True)
class Plain:
    """An answer that is not a generation: a JSON body, or a text."""

    body: dict[str, Any] | None = None
    text: str | None = None
    status: int = 200


class OllamaRoutes:
    """Ollama's routes that generate nothing, for one loaded model.

    Args:
        names: The model's names (the first one its id, as `Service.names`).
        listed: The names it is listed under (`model_names.listed`).
        backend: The loaded model.
        context: The context the server runs it with.
    """

    def __init__(
        self, names: tuple[str, ...], listed: tuple[str, ...], backend: Backend, context: int
    ) -> None:
        self.names, self.backend = names, backend
        self.card = ModelCard(listed, backend, context)

    def get(self, path: str) -> Plain | None:
        """A GET of Ollama's API; None for a path it does not have."""
        if path == "/":
            return Plain(text=RUNNING)
        if path == "/api/version":
            return Plain({"version": VERSION})
        if path == "/api/tags":
            return Plain({"models": self.card.tags()})
        if path == "/api/ps":
            return Plain({"models": self._running()})
        _refuse_unknown(path)
        return None

    def post(self, method: str, path: str, data: Any) -> Plain | None:
        """A POST or DELETE of Ollama's API that generates nothing; None for the others."""
        if method == "DELETE" and path == "/api/delete":
            return self._delete(data)
        if method != "POST":
            return None
        if path == "/api/show":
            self._model(data)
            return Plain(self.card.show())
        if path == "/api/pull":
            return self._pull(data)
        if path in ("/api/chat", "/api/generate"):
            return self._load(path, data)
        if path in REFUSED or path.startswith("/api/blobs/"):
            why = REFUSED.get(path, f"{ONE_MODEL}; it takes no blobs")
            raise ApiError(501, why.format(names=", ".join(self.card.names)), "unsupported")
        _refuse_unknown(path)
        return None

    def _model(self, data: Any) -> str:
        """The model a request names (`model`, or `name` as older clients send it)."""
        body = Body(data)
        if not body.present("model") and body.present("name"):
            body = Body({**data, "model": data["name"]})
        return model_name(body, self.names)

    def _running(self) -> list[dict[str, Any]]:
        """The loaded model as `/api/ps` lists it: none while the resident model is let go;
        else with when it unloads (None: never, or not before the replies holding it end)."""
        expires: float | None = None
        if isinstance(self.backend, ResidentBackend):
            state = self.backend.state()
            if not state["loaded"]:
                return []
            expires = state["expires_at"]
        return [self.card.running(self.backend.info(), expires)]

    def _pull(self, data: Any) -> Plain:
        body = Body(data)
        asked = body.text("model") or body.text("name") or ""
        if not accepts(asked, self.names):
            raise bad_request(f"gptoss-local serves {self.names[0]!r} and does not download "
                              f"models while serving: fetch {asked!r} with `gptoss-local pull`, "
                              "then start serve with it")  # fmt: skip
        return Plain({"status": "success"})

    def _delete(self, data: Any) -> Plain:
        asked = self._model(data)
        raise ApiError(403, f"{asked!r} is the model this server is serving and cannot be "
                       "deleted from under it: stop serve, then run `gptoss-local rm`",
                       "unsupported")  # fmt: skip

    def _load(self, path: str, data: Any) -> Plain | None:
        """A chat without messages or a generate without a prompt: Ollama's way to load a
        model; here it is loaded already. None: a request that generates."""
        body = Body(data)
        empty = not data.get("messages") if path == "/api/chat" else not data.get("prompt")
        if not empty:
            return None
        model = model_name(body, self.names)
        keep_alive = options.keep_alive(data.get("keep_alive"))
        if isinstance(self.backend, ResidentBackend):  # loaded now, or let go with 0
            self.backend.preload(keep_alive, "ollama")
        head = {"model": model, "created_at": now()}
        part = {"message": {"role": "assistant", "content": ""}} if path == "/api/chat" else {
            "response": ""}  # fmt: skip
        return Plain({**head, **part, "done": True, "done_reason": "load"})


def _refuse_unknown(path: str) -> None:
    """Nothing for a path outside Ollama's API; a 404 naming what it has for one inside."""
    if path.startswith("/api/"):
        raise ApiError(404, f"There is no {path} here: this server offers Ollama's /api/chat, "
                       "/api/generate, /api/tags, /api/show, /api/ps and /api/version.",
                       "unknown_route")  # fmt: skip
