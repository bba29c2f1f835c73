"""Asking the user about a tool call: the dialog, and the `Ask` a reply worker blocks on.

The tool loop asks on the reply's worker thread. `asker` posts `ToolApprovalAsked` with a
`Future` to the chat screen, whose live `ReplyView` shows `ApprovalScreen` and sets the future
from its answer; the worker waits for it, giving up with "deny" if the reply is stopped meanwhile
(the view then closes the dialog). The UI thread never blocks.
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Callable
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Button, Label, Static
from textual.widgets.button import ButtonVariant

from gptoss_local.events import ToolCall
from gptoss_local.i18n import N_, _, translate
from gptoss_local.tools import Ask, Decision, ToolInfo
from gptoss_local.tui.dialog import Dialog
from gptoss_local.tui.messages import ToolApprovalAsked
from gptoss_local.tui.tool_views import arguments_text

# The dialog's buttons: (answer, the keys that press it, label, variant). The keys are the same
# letters in every language and are shown before the translated label, so "(o) 允许一次" says
# what to press even where the word does not start with the letter.
CHOICES: tuple[tuple[str, str, str, ButtonVariant], ...] = (
    ("once", "o", N_("Allow once"), "primary"),
    ("always", "a", N_("Always for this chat"), "default"),
    ("deny", "d, Esc", N_("Deny"), "error"),
)


def choice_label(keys: str, label: str) -> str:
    """A button's words: its keys, then the label in the user's language ("(o) Allow once")."""
    return _("({keys}) {label}").format(keys=keys, label=translate(label))


def asker(post: Callable[[Message], object], cancel: threading.Event) -> Ask:
    """The `Ask` of one reply: shows the dialog through `post` and waits for the answer."""

    def ask(call: ToolCall, tool: ToolInfo) -> Decision:
        answer: concurrent.futures.Future[Decision] = concurrent.futures.Future()
        post(ToolApprovalAsked(call, tool, answer))
        while not cancel.is_set():
            try:
                return answer.result(timeout=0.05)
            except concurrent.futures.TimeoutError:
                continue
        return "deny"  # the reply was stopped: nothing more runs

    return ask


class ApprovalScreen(Dialog[Decision]):
    """May the model run this call? Returns "once", "always" (for this chat) or "deny"."""

    DEFAULT_CSS = """
    ApprovalScreen > Vertical { width: 90; max-height: 90%; border: thick $warning; }
    ApprovalScreen .about { color: $text-muted; }
    ApprovalScreen #arguments {
        height: auto; max-height: 20; margin-top: 1; background: $boost; padding: 0 1;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("o", "answer('once')", _("Allow once"), id="approval_once"),
        Binding("a", "answer('always')", _("Always for this chat"), id="approval_always"),
        Binding("d", "answer('deny')", _("Deny"), id="approval_deny"),
        Binding("escape", "answer('deny')", _("Deny"), id="approval_escape"),
        Binding("left", "app.focus_previous", show=False, id="approval_left"),
        Binding("right", "app.focus_next", show=False, id="approval_right"),
    ]

    def __init__(self, call: ToolCall, tool: ToolInfo) -> None:
        super().__init__()
        self.call, self.tool = call, tool

    def compose(self) -> ComposeResult:
        about = " · ".join(p for p in (self.tool.source, _first_line(self.tool.description)) if p)
        with Vertical():
            yield Label(
                _("The model wants to call {name}").format(name=self.call.name), markup=False
            )
            yield Label(about, classes="about", markup=False)
            if self.tool.note:
                yield Label(self.tool.note, classes="about", markup=False)
            with VerticalScroll(id="arguments"):
                yield Static(arguments_text(self.call), markup=False)
            with Horizontal():
                for answer, keys, label, variant in CHOICES:
                    yield Button(choice_label(keys, label), id=answer, variant=variant)

    def on_mount(self) -> None:
        self.query_one("#deny", Button).focus()  # Enter alone never runs anything

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.action_answer(event.button.id or "deny")

    def action_answer(self, answer: str) -> None:
        """Answer: "once", "always" or "deny"."""
        decision: Decision = (
            "once" if answer == "once" else "always" if answer == "always" else "deny"
        )
        self.dismiss(decision)


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= 80 else line[:79] + "…"
