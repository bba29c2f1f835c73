"""Ctrl+C as terminal users expect it: the first press stops the reply being written (or copies
the input's selection, as Ctrl+C does in a text box), a second press within a few seconds
quits. Ctrl+Q quits at once. The app binds both, so they work on every screen."""

from __future__ import annotations

import time
from collections.abc import Callable

from textual.widget import Widget

AGAIN_WITHIN = 3.0  # seconds in which a second Ctrl+C quits


class SecondPress:
    """Tells a second press of a key within `within` seconds of the first from a first one."""

    def __init__(
        self, within: float = AGAIN_WITHIN, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._within, self._clock = within, clock
        self._first = float("-inf")

    def __call__(self) -> bool:
        """Note a press; True when it is the second one (the first is kept, not replaced)."""
        now = self._clock()
        if now - self._first < self._within:
            return True
        self._first = now
        return False


def copy_selection(focused: Widget | None) -> bool:
    """Copy the focused widget's selected text, as Ctrl+C does in a text box; whether it did."""
    copy = getattr(focused, "action_copy", None)
    if copy is None or not getattr(focused, "selected_text", None):
        return False
    copy()
    return True
