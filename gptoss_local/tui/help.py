"""The help screen: every key of the app with what it does."""

from __future__ import annotations

from typing import ClassVar

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import DataTable, Label

from gptoss_local.i18n import N_, _, translate
from gptoss_local.tui.actions import ACTIONS
from gptoss_local.tui.dialog import Dialog

# Keys handled by widgets (the input, a focused message) rather than app bindings: not in ACTIONS.
INPUT_KEYS = (
    ("enter", N_("Send the message")),
    ("shift+enter, ^j", N_("New line in the message")),
    ("↑ / ↓", N_("Recall sent messages (empty input, or first line)")),
    ("^p", N_("Command palette: every action by name")),
    ("^c, ^c", N_("Stop the reply; pressed twice, quit")),
    ("tab, click", N_("Focus a message: c copies it, b a code block; ↑ / ↓ move")),
)


def help_rows(key_display: object) -> list[tuple[str, str, str]]:
    """(key, name, description) of every app binding, then of the input's own keys.

    Args:
        key_display: The app's `get_key_display`, so keys read as they do in the footer.
    """
    rows = []
    for action in ACTIONS:
        shown = key_display(Binding(action.key, action.action, action.shown_label))  # type: ignore[operator]
        rows.append((shown, action.shown_label, action.shown_help))
    rows += [(key, "", translate(text)) for key, text in INPUT_KEYS]
    return rows


class HelpScreen(Dialog[None]):
    """A table of every binding; Escape, F1 or q closes it."""

    DEFAULT_CSS = """
    HelpScreen > Vertical { width: 100; max-height: 90%; padding: 0 2; }
    HelpScreen DataTable { height: 1fr; }
    HelpScreen Label { width: 100%; margin: 1 0; color: $text-muted; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,f1,q", "close", _("Close"), id="help_close"),
    ]

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(_("Keys (Esc closes). Every action is also in the palette, Ctrl+P."))
            yield DataTable(cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        self.query_one(DataTable).focus()

    def on_resize(self, event: events.Resize) -> None:
        self._fill()

    def _fill(self) -> None:
        """(Re)build the table so the last column wraps in the width there is, rather than
        being cut off on a narrow terminal."""
        table = self.query_one(DataTable)
        rows = help_rows(self.app.get_key_display)
        key_width = max(cell_len(key) for key, _name, _text in rows)
        name_width = max(cell_len(name) for _key, name, _text in rows)
        padding = 2 * table.cell_padding * 3
        room = table.size.width - table.styles.scrollbar_size_vertical  # kept for a scrollbar
        room -= key_width + name_width + padding
        cursor = table.cursor_row
        table.clear(columns=True)
        table.add_column(_("Key"), width=key_width)
        table.add_column(_("Action"), width=name_width)
        table.add_column(_("What it does"), width=max(room, 16))
        for row in rows:
            table.add_row(*row, height=None)
        table.move_cursor(row=cursor)

    def action_close(self) -> None:
        """Close the help screen."""
        self.dismiss(None)
