"""What the commands that load a model say on stderr beside their output: the plan's warnings
and the steps of a load."""

from __future__ import annotations

import sys

from gptoss_local.i18n import _


def warn(text: str) -> None:
    """One warning on stderr: `warning: TEXT`."""
    note(_("warning: {text}").format(text=text))


def note(text: str) -> None:
    """One line on stderr, at once."""
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


class LoadNotes:
    """Load progress on stderr: each new step once (starting Ollama, pulling a tag), not every
    fraction of a llama.cpp load."""

    def __init__(self) -> None:
        self._last = ""

    def __call__(self, fraction: float, what: str) -> bool:
        if what and what != self._last and what != _("loading the weights"):
            note(what)
        self._last = what
        return True
