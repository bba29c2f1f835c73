"""The frame the chat's dialogs share: a bordered box in the middle of the screen, its buttons
in a row on the right.

A dialog subclasses `Dialog`, composes its box as a `Vertical`, and its own `DEFAULT_CSS` says
only what differs (the box's width, height, border, padding): a subclass's rules win over
these at the same specificity.
"""

from __future__ import annotations

from typing import TypeVar

from textual.screen import ModalScreen

ResultType = TypeVar("ResultType")


class Dialog(ModalScreen[ResultType]):
    """A modal screen whose box (its `Vertical`) stands in the middle, at most the screen's size."""

    DEFAULT_CSS = """
    Dialog { align: center middle; }
    Dialog > Vertical {
        width: 60; max-width: 100%; height: auto; max-height: 100%; padding: 1 2;
        border: thick $primary; background: $surface;
    }
    Dialog Horizontal { height: auto; margin-top: 1; align-horizontal: right; }
    Dialog Button { margin-left: 1; }
    """
