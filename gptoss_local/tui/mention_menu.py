"""`@` completion of paths in a `TextArea`: a menu that floats by the cursor, and the controller
that decides what it shows and what accepting an entry writes.

The menu never takes the focus: the text area keeps it, and hands the menu's keys (Up, Down,
Tab, Enter, Esc) to the controller first, while the menu is shown. So Enter in a chat box
accepts a path instead of sending the message, and typing goes on into the box as usual.

Wiring it into a text area, as the chat's `ChatInput` (`widgets.py`) does: the text area has a
`completer` attribute (None by default) that its `_on_key` asks first (`handle_key`: a key the
menu takes, Enter included, goes no further); it calls `completer.refresh()` after every edit
and cursor move and `completer.close()` when it loses the focus. The screen yields a
`MentionMenu` anywhere (it floats, `overlay: screen`, and takes no room) and sets the
controller once both exist: `MentionCompleter(the_input, the_menu, root=Path.cwd())`.

Clicking an entry accepts it too (the menu calls the controller back, `MentionMenu.chosen`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rich.cells import cell_len
from textual import events
from textual.content import Content
from textual.geometry import Offset
from textual.widgets import OptionList, TextArea
from textual.widgets.option_list import Option

from gptoss_local.attachments.completion import as_mention, complete_path

SHOWN = 8  # entries in the menu at most: more would cover the chat
MENU_KEYS = frozenset({"tab", "enter", "up", "down", "escape"})


# What is being typed after an "@" at the start or after whitespace, up to the cursor: a path
# in quotes not closed yet (`@"my no`, a path with spaces), else one without whitespace.
_QUOTED = re.compile(r'(?<!\S)@"([^"]*)$')
_BARE = re.compile(r"(?<!\S)@(\S*)$")


@dataclass(frozen=True)
class MentionWord:
    """The `@partial` word that ends at the cursor: its line, the column of its "@", the
    cursor's column (the end of `partial`), and whether it opened a quote."""

    row: int
    start: int
    end: int
    partial: str
    quoted: bool = False


def mention_before(line: str, column: int) -> tuple[int, str, bool] | None:
    """The `@word` that ends at `column` of `line`: the column of its "@", the path typed after
    it, and whether it is in quotes (`@"my no`).

    None when the word before the cursor does not start with "@", or its "@" is glued to
    something before it (as in an e-mail address).
    """
    before = line[:column]
    found = _QUOTED.search(before)
    quoted = found is not None
    found = found or _BARE.search(before)
    return None if found is None else (found.start(), found.group(1), quoted)


def mention_text(path: str, quoted: bool) -> str:
    """How `path` is written after accepting it: `@path ` for a file (the space ends it), and
    a folder left open to go on typing in it (`@src/`, or `@"my docs/` in quotes). The quotes
    stay if the user opened them, and come when the path holds a space."""
    written = f'@"{path}"' if quoted else as_mention(path)
    return written.removesuffix('"') if path.endswith("/") else written + " "


class MentionMenu(OptionList, can_focus=False):
    """The paths that complete the `@word` being typed, floating by the cursor (below it, or
    above when there is no room below, as at the bottom of the screen); hidden until shown."""

    DEFAULT_CSS = """
    MentionMenu {
        overlay: screen; constrain: inside inflect; margin: 1 0;
        width: auto; min-width: 20; max-width: 60; height: auto; max-height: 10;
        border: tall $accent; padding: 0; display: none;
    }
    MentionMenu > .option-list--option-highlighted {
        color: $block-cursor-foreground; background: $block-cursor-background;
        text-style: $block-cursor-text-style;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.chosen: Callable[[str], None] | None = None  # the controller's, for clicks
        self.word: MentionWord | None = None  # what the entries complete, while shown

    @property
    def shown(self) -> bool:
        """Whether the menu is on screen."""
        return bool(self.display)

    @property
    def paths(self) -> list[str]:
        """The entries, in order."""
        return [option.id or "" for option in self.options]

    @property
    def choice(self) -> str | None:
        """The highlighted entry."""
        option = self.highlighted_option
        return None if option is None else option.id

    def show(self, word: MentionWord, paths: list[str], at: Offset) -> None:
        """Show `paths`, the completions of `word`, the first highlighted, with the menu's
        top-left corner by `at` (a screen offset: the menu goes on the line below it, or ends
        on the line above)."""
        self.word = word
        if paths != self.paths:
            self.set_options(Option(Content(path), id=path) for path in paths)
            self.highlighted = 0
        self.absolute_offset = at
        self.display = True
        self.refresh(layout=True)

    def hide(self) -> None:
        """Take the menu off the screen."""
        self.word = None
        self.display = False

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if self.chosen is not None and event.option.id is not None:
            self.chosen(event.option.id)


class MentionCompleter:
    """Completes the `@path` before a text area's cursor from the files under `root`.

    Args:
        text_area: Where the user types.
        menu: The menu that shows the completions (on the same screen).
        root: The folder paths are relative to (the working folder).
        complete: What lists the completions of a partial path (`complete_path`).
    """

    def __init__(
        self,
        text_area: TextArea,
        menu: MentionMenu,
        root: Path,
        complete: Callable[[str, Path, int], list[str]] = complete_path,
    ) -> None:
        self.text_area, self.menu, self.root = text_area, menu, root
        self._complete = complete
        self._dismissed: MentionWord | None = None  # closed with Esc: stays closed for it
        menu.chosen = self.accept

    @property
    def is_open(self) -> bool:
        """Whether the menu is shown (and so takes Up, Down, Tab, Enter and Esc)."""
        return self.menu.shown

    def word(self) -> MentionWord | None:
        """The `@partial` word that ends at the cursor, if the cursor has no selection."""
        selection = self.text_area.selection
        if selection.start != selection.end:
            return None
        row, column = selection.end
        found = mention_before(self.text_area.document.get_line(row), column)
        if found is None:
            return None
        start, partial, quoted = found
        return MentionWord(row, start, column, partial, quoted)

    def refresh(self) -> None:
        """Look at the word before the cursor again: show its completions, or hide the menu."""
        word = self.word()
        if word != self._dismissed:
            self._dismissed = None
        paths = [] if word is None or word == self._dismissed else self._paths(word.partial)
        if word is None or not paths:
            self.close()
            return
        typed = self.text_area.document.get_line(word.row)[word.start : word.end]
        at = self.text_area.cursor_screen_offset - Offset(cell_len(typed), 0)
        self.menu.show(word, paths, at)

    def _paths(self, partial: str) -> list[str]:
        paths = self._complete(partial, self.root, SHOWN)[:SHOWN]
        return [] if paths == [partial] else paths  # complete already: Enter sends

    def handle_key(self, event: events.Key) -> bool:
        """Use `event` if it is one of the menu's keys while it is shown (Up and Down move,
        Tab and Enter accept, Esc closes); whether it was used (and so stopped)."""
        if event.key not in MENU_KEYS or not self.is_open:
            return False
        if self.menu.word != self.word():  # typed faster than the menu followed: catch up
            self.refresh()
            if not self.is_open:
                return False
        if event.key in ("tab", "enter"):
            choice = self.menu.choice
            if choice is not None:
                self.accept(choice)
        elif event.key == "up":
            self.menu.action_cursor_up()
        elif event.key == "down":
            self.menu.action_cursor_down()
        else:  # escape
            self._dismissed = self.word()
            self.close()
        event.stop()
        event.prevent_default()
        return True

    def accept(self, path: str) -> None:
        """Write `@path` in place of the `@partial` word (in quotes if it holds a space); a
        folder keeps the menu open on what it holds, a file gets a space after it and closes
        the menu."""
        word = self.word()
        if word is None:
            return
        written = mention_text(path, word.quoted)
        self.text_area.replace(written, (word.row, word.start), (word.row, word.end))
        self.text_area.move_cursor((word.row, word.start + len(written)))
        if path.endswith("/"):
            self.refresh()
        else:
            self.close()

    def close(self) -> None:
        """Hide the menu (it shows again when the word before the cursor changes)."""
        self.menu.hide()
