"""Ctrl+C as terminal users expect it: the first press stops the reply being written (or copies
the input's selection, as Ctrl+C does in a text box), a second press within a few seconds
quits. Ctrl+Q quits at once."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual.app import App

    _Base = App[None]
else:
    _Base = object

AGAIN_WITHIN = 3.0  # seconds in which a second Ctrl+C quits


class QuitKeys(_Base):
    """A mixin of `ChatApp`, which provides `busy` and `action_stop`."""

    _interrupted_at = float("-inf")

    @property
    def busy(self) -> bool:
        """Whether a reply is being written (the app overrides this)."""
        raise NotImplementedError

    def action_stop(self) -> None:
        raise NotImplementedError

    async def action_interrupt(self) -> None:
        """Copy a selection, else stop the reply; pressed again soon after, quit."""
        copy = getattr(self.focused, "action_copy", None)
        if copy is not None and getattr(self.focused, "selected_text", None):
            copy()
            return
        now = time.monotonic()
        if now - self._interrupted_at < AGAIN_WITHIN:
            await self.run_action("quit")
            return
        self._interrupted_at = now
        stopped = "Stopped the reply. " if self.busy else ""
        self.action_stop()
        self.notify(f"{stopped}Press Ctrl+C again to quit (Ctrl+Q quits at once).", timeout=3)
