"""Small modal questions: a new title, a yes/no confirmation, the chat's instructions, where
to export the chat.

Their text wraps in the dialog's width (at most the screen's), so a long question is read whole
at 80 columns rather than cut at the dialog's edge."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Input, Label, TextArea

from gptoss_local.i18n import _
from gptoss_local.tui.dialog import Dialog


class RenameScreen(Dialog[str | None]):
    """Ask for a chat's new title; returns it, or None when cancelled."""

    DEFAULT_CSS = "RenameScreen Label { width: 100%; }"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", _("Cancel"), id="rename_cancel")
    ]

    def __init__(self, title: str) -> None:
        super().__init__()
        self._title = title

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(_("New title for this chat:"))
            yield Input(self._title, id="title")

    @on(Input.Submitted)
    def _submit(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        """Close without renaming."""
        self.dismiss(None)


class ExportScreen(Dialog[str | None]):
    """Ask where to export the chat; returns the path typed (relative to `folder`, where it
    is not absolute), or None when cancelled.

    Args:
        name: The file name offered.
        folder: The folder a relative path is in (the one the app was started from).
    """

    DEFAULT_CSS = """
    ExportScreen > Vertical { width: 76; }
    ExportScreen Label { width: 100%; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", _("Cancel"), id="export_cancel")
    ]

    def __init__(self, name: str, folder: Path) -> None:
        super().__init__()
        self._name, self._folder = name, folder

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(_("Export this chat as Markdown to this file, in {folder} unless the path "
                          "says otherwise. Enter exports, Esc cancels.").format(
                              folder=self._folder), markup=False)  # fmt: skip
            yield Input(self._name, id="path")

    @on(Input.Submitted)
    def _submit(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        """Close without exporting."""
        self.dismiss(None)


class ConfirmScreen(Dialog[bool]):
    """Ask a yes/no question; returns True only for an explicit yes.

    Args:
        question: What is asked.
        yes: The button that answers yes (default "Delete").
    """

    DEFAULT_CSS = "ConfirmScreen Label { width: 100%; }"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "answer(False)", _("No"), id="confirm_no"),
        Binding("y", "answer(True)", _("Yes"), id="confirm_yes"),
        Binding("left", "app.focus_previous", show=False, id="confirm_left"),
        Binding("right", "app.focus_next", show=False, id="confirm_right"),
    ]

    def __init__(self, question: str, yes: str = "") -> None:
        super().__init__()
        self._question = question
        self._yes = yes or _("Delete")

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self._question, markup=False)
            with Horizontal():
                yield Button(_("Cancel"), id="no")
                yield Button(self._yes, id="yes", variant="error")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()  # the safe answer is the default

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        """Answer the question."""
        self.dismiss(yes)


class InstructionsScreen(Dialog[str | None]):
    """Edit a chat's instructions (its system prompt); returns the text, or None if cancelled."""

    DEFAULT_CSS = """
    InstructionsScreen > Vertical { width: 80; }
    InstructionsScreen Label { width: 100%; }
    InstructionsScreen TextArea { height: 10; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", _("Cancel"), id="instructions_cancel"),
        Binding("ctrl+s", "save", _("Save"), id="instructions_save"),
    ]

    def __init__(self, instructions: str) -> None:
        super().__init__()
        self._instructions = instructions

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(_("Instructions for this chat (empty: none). Ctrl+S saves, Esc cancels."))
            yield TextArea(self._instructions, id="instructions", soft_wrap=True)
            with Horizontal():
                yield Button(_("Cancel"), id="cancel")
                yield Button(_("Save"), id="save", variant="primary")

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "save":
            self.action_save()
        else:
            self.action_cancel()

    def action_save(self) -> None:
        """Close, returning the edited instructions."""
        self.dismiss(self.query_one(TextArea).text.strip())

    def action_cancel(self) -> None:
        """Close without changing the instructions."""
        self.dismiss(None)
