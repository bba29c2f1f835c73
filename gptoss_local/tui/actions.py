"""The chat's actions in one table: key, footer label and palette help, so none is forgotten.

The chat screen binds them all (in this order, which is the footer's); quitting and the help
are app-wide, so the app binds those too, and they work on the first-run screen as well.
"""

from __future__ import annotations

from textual.binding import Binding, BindingType

# (binding id, key, action, footer label, palette help); the palette lists every one of them.
ACTIONS = (
    ("quit", "ctrl+q", "quit", "Quit", "Quit gptoss-local"),
    ("stop", "escape", "stop", "Stop", "Stop the reply being written (keeps what it wrote)"),
    ("effort", "ctrl+o", "cycle_effort", "Effort", "Switch reasoning effort: low, medium, high"),
    ("reasoning", "ctrl+t", "toggle_reasoning", "Reasoning", "Show or hide all reasoning"),
    ("regenerate", "ctrl+r", "regenerate", "Regenerate", "Write the last reply again"),
    ("edit", "ctrl+l", "edit_last", "Edit last", "Edit and resend your last message"),
    ("new_chat", "ctrl+n", "new_chat", "New chat", "Start a new chat"),
    ("chats", "ctrl+b", "toggle_sidebar", "Chats", "Show or hide the saved chats"),
    # F-keys: the input box (a TextArea) already owns Ctrl+Y (redo), Ctrl+K, Ctrl+C/X/V, ...
    ("copy", "f4", "copy_message", "Copy", "Copy the focused message, else the last reply"),
    ("copy_code", "f5", "copy_code", "Copy code", "Copy a code block (asks which, if several)"),
    (
        "instructions",
        "f3",
        "edit_instructions",
        "Instructions",
        "Edit this chat's instructions (system prompt)",
    ),
    ("model", "f9", "choose_model", "Model", "Choose the model, context and engine again"),
    ("search", "ctrl+f", "search_chats", "Search", "Search the saved chats"),
    ("rename", "f2", "rename_chat", "Rename", "Rename this chat"),
    ("delete", "f8", "delete_chat", "Delete", "Delete this chat (asks first)"),
    ("help", "f1", "help", "Help", "List every key and what it does"),
)
_PRIORITY = {"quit"}  # Ctrl+Q must work whatever has focus, a modal included
APP_WIDE = {"quit", "help"}  # actions of the app; the others are the chat screen's


def _binding(ident: str, key: str, action: str, label: str, help_text: str) -> Binding:
    return Binding(key, action, label, id=ident, priority=ident in _PRIORITY, tooltip=help_text)


def chat_bindings() -> list[BindingType]:
    """The bindings of `ACTIONS`, with their ids and descriptions, for the chat screen."""
    return [
        _binding(ident, key, f"app.{action}" if ident in APP_WIDE else action, label, help_text)
        for ident, key, action, label, help_text in ACTIONS
    ]


def app_bindings() -> list[BindingType]:
    """The app-wide bindings: quit, help, and Ctrl+C (stop; twice: quit)."""
    table: list[BindingType] = [_binding(*row) for row in ACTIONS if row[0] in APP_WIDE]
    # "?" too, where it is not typed into the input (which keeps it: people ask questions).
    table.append(Binding("question_mark", "help", "Help", show=False, id="help_question_mark"))
    # Ctrl+C before any widget: stop, and twice to quit (a selection in the input is copied).
    table.append(Binding("ctrl+c", "interrupt", "Quit", show=False, priority=True, id="interrupt"))
    return table
