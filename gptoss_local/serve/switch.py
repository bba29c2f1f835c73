"""Switching the engine's model (`urls.SWITCH_PATH`): `POST {"model": NAME}` or
`{"model_path": FILE}` lets the model go and loads that one in the same server (its address,
key, APIs and flags stay), so a program that wants another model need not load a second copy
beside it. The model is resolved as the commands resolve theirs (`serve` gives a `Switcher`).

The switch never waits for a reply: while a request holds the model (a reply streams or
waits, a prefill runs) it is refused with 409 naming who uses it, so no reply is cut; of two
switches at once the second is refused with 409 too (`ResidentBackend.swap`). Requests that
come during the load are answered 503 (try again shortly).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from gptoss_local.backends.base import Backend, BackendError, GenerationSettings
from gptoss_local.errors import UnknownModelError, UserError
from gptoss_local.serve.errors import ApiError, bad_request
from gptoss_local.serve.resident import ResidentBackend


@dataclass(frozen=True)
class Choice:
    """A model the engine can switch to, resolved (nothing loaded yet).

    Attributes:
        names: Its id, then the other names requests may use (as `Service` takes them).
        opener: Loads it.
        generation: The generation settings of requests that set none.
        memory: What it takes once loaded, as planned (`{"vram": bytes, "ram": bytes}`).
    """

    names: tuple[str, ...]
    opener: Callable[[], Backend]
    generation: GenerationSettings
    memory: dict[str, int] = field(default_factory=dict)


class Switcher(Protocol):
    """How a server resolves the model a switch asks for, and hears that it switched."""

    def resolve(self, model: str | None, model_path: str | None) -> Choice:
        """The model named (a catalog name or alias, or a GGUF file).

        Raises:
            UserError: an unknown model, a file that cannot be loaded, a model not downloaded.
        """
        ...

    def switched(self, choice: Choice) -> None:
        """The engine holds `choice` now (the runtime file names it)."""
        ...


def asked(data: Any) -> tuple[str | None, str | None]:
    """The `model` or `model_path` a switch's body names (exactly one of them)."""
    if not isinstance(data, dict):
        raise bad_request('send {"model": NAME} or {"model_path": FILE}')
    model, path = data.get("model"), data.get("model_path")
    if (model is None) == (path is None):
        raise bad_request('send one of "model" (a name) and "model_path" (a GGUF file)', "model")
    for name, value in (("model", model), ("model_path", path)):
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise bad_request(f"{name} must be a non-empty string", name)
    return model, path


def resolve(switcher: Switcher | None, backend: Backend, data: Any) -> Choice:
    """The model a switch's body names, resolved by the server's `switcher`.

    Raises:
        ApiError: 400 for a bad body, 404 for an unknown model, 422 for one that cannot be
            loaded here, 501 for a server that cannot switch (one that is not the engine).
    """
    model, path = asked(data)
    if switcher is None or not isinstance(backend, ResidentBackend):
        raise ApiError(501, "This server cannot switch its model (only `gptoss-local serve` "
                       "can).", "switch_unsupported")  # fmt: skip
    try:
        return switcher.resolve(model, path)
    except UnknownModelError as exc:
        raise ApiError(404, str(exc), "model_not_found", "model") from None
    except UserError as exc:
        param = "model" if model is not None else "model_path"
        raise ApiError(422, str(exc), "model_unavailable", param) from None


def swap(backend: ResidentBackend, choice: Choice, done: Callable[[], None]) -> None:
    """Load `choice` in place of the model `backend` holds (`ResidentBackend.swap`).

    Raises:
        ApiError: 409 (in use, or another switch runs), 500 (the load failed: the former
            model stays, loaded again on the next request).
    """
    try:
        backend.swap(choice.names[0], choice.opener, choice.memory, done)
    except ApiError:
        raise
    except (BackendError, UserError, OSError, ValueError) as exc:
        raise ApiError(500, f"The engine could not load {choice.names[0]}: {exc}. It keeps "
                       "its former model.", "load_failed") from None  # fmt: skip
