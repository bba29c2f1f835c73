"""The chat's models through the machine's engine: `EngineLink.through` turns a `Ready` (the
chat's first model, or one chosen with F9) into one that opens a client of the engine, found
anew at each open; when the engine holds another model it gives an `Offer` instead: the
question the chat shows, and the `Ready` that switches the engine if the user says so. Never a
second copy beside the engine by accident."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from gptoss_local.backends.base import Backend, LoadProgress
from gptoss_local.launch.engine_switch import Ask, question
from gptoss_local.launch.engines import Opener, Ready
from gptoss_local.launch.resident import OtherModel, over_engine
from gptoss_local.plan.wishes import Wishes
from gptoss_local.serve.find_engine import Engine


def _quiet(_text: str) -> None:
    """Hears nothing: the app is on the terminal."""


@dataclass(frozen=True)
class Offer:
    """The engine holds another model than the one wanted.

    Attributes:
        question: What the chat asks (what the engine holds, who uses it, who is affected).
        ready: Opens the wanted model by switching the engine to it first.
        refusal: What to say when the user declines.
    """

    question: str
    ready: Ready
    refusal: OtherModel


class EngineLink:
    """How the chat reaches the machine's engine.

    Args:
        wishes: The chat's wishes (its engine).
        background: Start the engine in the background when none runs (`engine_start`).
        client: The chat, as the engine shows who uses it.
        notice: Hears what is being done (stderr before the app starts, nothing after).
    """

    def __init__(
        self,
        wishes: Wishes,
        background: bool,
        client: str,
        notice: Callable[[str], None] = _quiet,
    ) -> None:
        self.wishes, self.background, self.client, self.notice = wishes, background, client, notice

    def through(self, ready: Ready) -> Ready | Offer:
        """`ready` opening the engine when it holds that model (`ready` itself when no engine
        runs), or the `Offer` of a switch when it holds another.

        Raises:
            UserError: the engine cannot be used (a runtime file not to trust, one starting).
        """
        try:
            found = over_engine(ready, self.wishes, self.background, self.notice, self.client)
        except OtherModel as exc:
            switched = replace(ready, open=self._reopen(ready, agreed=True))
            return Offer(question(exc.found, exc.wanted), switched, exc)
        if found is ready:
            return ready
        return replace(found, open=self._reopen(ready, agreed=False))

    def _reopen(self, ready: Ready, agreed: bool) -> Opener:
        """Opens `ready` through the engine as it is at each open (after a crash: a new one,
        or a copy here); `agreed`: the user said to switch the engine to it (it is switched
        again should it hold another model by then), else another model there is refused."""
        wishes, background, client = self.wishes, self.background, self.client
        ask: Ask | None = _yes if agreed else None

        def reopen(progress: LoadProgress) -> Backend:
            def notice(text: str) -> None:
                progress(0.0, text)

            return over_engine(ready, wishes, background, notice, client, ask).open(progress)

        return reopen


def _yes(_found: Engine, _wanted: str) -> bool:
    """The user agreed already (in the app's dialog)."""
    return True
