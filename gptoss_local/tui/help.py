"""The help screen: every key of the app with what it does."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Label

from gptoss_local.tui.actions import ACTIONS

# Keys handled by widgets (the input, a focused message) rather than app bindings: not in ACTIONS.
INPUT_KEYS = (
    ("enter", "Send the message"),
    ("shift+enter, ^j", "New line in the message"),
    ("↑ / ↓", "Recall sent messages (empty input, or first line)"),
    ("^p", "Command palette: every action by name"),
    ("^c, ^c", "Stop the reply; pressed twice, quit"),
    ("tab, click", "Focus a message: c copies it, b a code block; ↑ / ↓ move"),
)


def help_rows(key_display: object) -> list[tuple[str, str, str]]:
    """(key, name, description) of every app binding, then of the input's own keys.

    Args:
        key_display: The app's `get_key_display`, so keys read as they do in the footer.
    """
    rows = []
    for _ident, key, action, label, help_text in ACTIONS:
        shown = key_display(Binding(key, action, label))  # type: ignore[operator]
        rows.append((shown, label, help_text))
    rows += [(key, "", text) for key, text in INPUT_KEYS]
    return rows


class HelpScreen(ModalScreen[None]):
    """A table of every binding; Escape, F1 or q closes it."""

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > Vertical {
        width: 96; max-width: 100%; height: auto; max-height: 90%; padding: 0 2;
        border: thick $primary; background: $surface;
    }
    HelpScreen DataTable { height: 1fr; }
    HelpScreen Label { margin: 1 0; color: $text-muted; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,f1,q", "close", "Close", id="help_close"),
    ]

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Keys (Esc closes). Every action is also in the palette, Ctrl+P.")
            yield DataTable(cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("Key", "Action", "What it does")
        table.add_rows(help_rows(self.app.get_key_display))
        table.focus()

    def action_close(self) -> None:
        """Close the help screen."""
        self.dismiss(None)
