"""The chat's actions in one table: key, footer label and palette help, so none is forgotten.

The chat screen binds them all (in this order, which is the footer's); quitting and the help
are app-wide, so the app binds those too, and they work on the first-run screen as well. The
command palette lists every one of them (`palette.ActionCommands`).
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding, BindingType

from gptoss_local.i18n import N_, _, translate


@dataclass(frozen=True)
class Action:
    """One action: its binding id, key, action name, footer label and help (palette, F1).

    `label` and `help` are the English message ids (marked with `N_`); `shown_label` and
    `shown_help` are what the user reads.
    """

    id: str
    key: str
    action: str
    label: str
    help: str

    @property
    def shown_label(self) -> str:
        """The footer label in the user's language."""
        return translate(self.label)

    @property
    def shown_help(self) -> str:
        """The help in the user's language."""
        return translate(self.help)

    @property
    def app_wide(self) -> bool:
        """Whether the app runs it (on any screen), rather than the chat screen."""
        return self.id in APP_WIDE

    def binding(self, action: str | None = None) -> Binding:
        """The binding of this action (running `action` instead, if given)."""
        return Binding(self.key, action or self.action, self.shown_label, id=self.id,
                       priority=self.id in _PRIORITY, tooltip=self.shown_help)  # fmt: skip


# One action a row: id, key, action and footer label, then the help on a line of its own.
ACTIONS = (
    Action("quit", "ctrl+q", "quit", N_("Quit"),
           N_("Quit gptoss-local")),
    Action("stop", "escape", "stop", N_("Stop"),
           N_("Stop the reply being written (keeps what it wrote)")),
    Action("effort", "ctrl+o", "cycle_effort", N_("Effort"),
           N_("Switch reasoning effort: low, medium, high")),
    Action("reasoning", "ctrl+t", "toggle_reasoning", N_("Reasoning"),
           N_("Show or hide all reasoning")),
    Action("regenerate", "ctrl+r", "regenerate", N_("Regenerate"),
           N_("Write the last reply again")),
    Action("edit", "ctrl+l", "edit_last", N_("Edit last"),
           N_("Edit and resend your last message")),
    Action("new_chat", "ctrl+n", "new_chat", N_("New chat"),
           N_("Start a new chat")),
    Action("chats", "ctrl+b", "toggle_sidebar", N_("Chats"),
           N_("Show or hide the saved chats")),
    # F-keys: the input box (a TextArea) already owns Ctrl+Y (redo), Ctrl+K, Ctrl+C/X/V, ...
    Action("copy", "f4", "copy_message", N_("Copy"),
           N_("Copy the focused message, else the last reply")),
    Action("copy_code", "f5", "copy_code", N_("Copy code"),
           N_("Copy a code block (asks which, if several)")),
    Action("instructions", "f3", "edit_instructions", N_("Instructions"),
           N_("Edit this chat's instructions (system prompt)")),
    Action("model", "f9", "choose_model", N_("Model"),
           N_("Choose the model, context and engine again")),
    Action("attach", "ctrl+g", "attach_file", N_("Attach"),
           N_("Attach a file or folder to the next message (or type @ and a path)")),
    Action("search", "ctrl+f", "search_chats", N_("Search"),
           N_("Search the saved chats")),
    Action("rename", "f2", "rename_chat", N_("Rename"),
           N_("Rename this chat")),
    Action("delete", "f8", "delete_chat", N_("Delete"),
           N_("Delete this chat (asks first)")),
    Action("export", "ctrl+s", "export_chat", N_("Export"),
           N_("Export this chat as Markdown to a file (asks which)")),
    Action("help", "f1", "help", N_("Help"),
           N_("List every key and what it does")),
)  # fmt: skip
_PRIORITY = {"quit"}  # Ctrl+Q must work whatever has focus, a modal included
APP_WIDE = {"quit", "help"}  # actions of the app; the others are the chat screen's


def chat_bindings() -> list[BindingType]:
    """The bindings of `ACTIONS`, with their ids and descriptions, for the chat screen."""
    return [a.binding(f"app.{a.action}" if a.app_wide else None) for a in ACTIONS]


def app_bindings() -> list[BindingType]:
    """The app-wide bindings: quit, help, and Ctrl+C (stop; twice: quit)."""
    table: list[BindingType] = [a.binding() for a in ACTIONS if a.app_wide]
    # "?" too, where it is not typed into the input (which keeps it: people ask questions).
    table.append(Binding("question_mark", "help", _("Help"), show=False, id="help_question_mark"))
    # Ctrl+C before any widget: stop, and twice to quit (a selection in the input is copied).
    table.append(
        Binding("ctrl+c", "interrupt", _("Quit"), show=False, priority=True, id="interrupt")
    )
    return table
