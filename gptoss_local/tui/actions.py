"""The chat's actions in one table: key, footer label and palette help, so none is forgotten.

The chat screen binds them all (in this order, which is the footer's); quitting and the help
are app-wide, so the app binds those too, and they work on the first-run screen as well. The
command palette lists every one of them (`palette.ActionCommands`).
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding, BindingType


@dataclass(frozen=True)
class Action:
    """One action: its binding id, key, action name, footer label and help (palette, F1)."""

    id: str
    key: str
    action: str
    label: str
    help: str

    @property
    def app_wide(self) -> bool:
        """Whether the app runs it (on any screen), rather than the chat screen."""
        return self.id in APP_WIDE

    def binding(self, action: str | None = None) -> Binding:
        """The binding of this action (running `action` instead, if given)."""
        return Binding(self.key, action or self.action, self.label, id=self.id,
                       priority=self.id in _PRIORITY, tooltip=self.help)  # fmt: skip


ACTIONS = (
    Action("quit", "ctrl+q", "quit", "Quit", "Quit gptoss-local"),
    Action("stop", "escape", "stop", "Stop", "Stop the reply being written (keeps what it wrote)"),
    Action(
        "effort", "ctrl+o", "cycle_effort", "Effort", "Switch reasoning effort: low, medium, high"
    ),
    Action("reasoning", "ctrl+t", "toggle_reasoning", "Reasoning", "Show or hide all reasoning"),
    Action("regenerate", "ctrl+r", "regenerate", "Regenerate", "Write the last reply again"),
    Action("edit", "ctrl+l", "edit_last", "Edit last", "Edit and resend your last message"),
    Action("new_chat", "ctrl+n", "new_chat", "New chat", "Start a new chat"),
    Action("chats", "ctrl+b", "toggle_sidebar", "Chats", "Show or hide the saved chats"),
    # F-keys: the input box (a TextArea) already owns Ctrl+Y (redo), Ctrl+K, Ctrl+C/X/V, ...
    Action("copy", "f4", "copy_message", "Copy", "Copy the focused message, else the last reply"),
    Action(
        "copy_code", "f5", "copy_code", "Copy code", "Copy a code block (asks which, if several)"
    ),
    Action(
        "instructions",
        "f3",
        "edit_instructions",
        "Instructions",
        "Edit this chat's instructions (system prompt)",
    ),
    Action("model", "f9", "choose_model", "Model", "Choose the model, context and engine again"),
    Action("search", "ctrl+f", "search_chats", "Search", "Search the saved chats"),
    Action("rename", "f2", "rename_chat", "Rename", "Rename this chat"),
    Action("delete", "f8", "delete_chat", "Delete", "Delete this chat (asks first)"),
    Action("help", "f1", "help", "Help", "List every key and what it does"),
)
_PRIORITY = {"quit"}  # Ctrl+Q must work whatever has focus, a modal included
APP_WIDE = {"quit", "help"}  # actions of the app; the others are the chat screen's


def chat_bindings() -> list[BindingType]:
    """The bindings of `ACTIONS`, with their ids and descriptions, for the chat screen."""
    return [a.binding(f"app.{a.action}" if a.app_wide else None) for a in ACTIONS]


def app_bindings() -> list[BindingType]:
    """The app-wide bindings: quit, help, and Ctrl+C (stop; twice: quit)."""
    table: list[BindingType] = [a.binding() for a in ACTIONS if a.app_wide]
    # "?" too, where it is not typed into the input (which keeps it: people ask questions).
    table.append(Binding("question_mark", "help", "Help", show=False, id="help_question_mark"))
    # Ctrl+C before any widget: stop, and twice to quit (a selection in the input is copied).
    table.append(Binding("ctrl+c", "interrupt", "Quit", show=False, priority=True, id="interrupt"))
    return table
