"""The sidebar: a search box over the saved chats, and the chats, most recent first.

It owns what is done to a saved chat as such: listing, searching, renaming and deleting (each
asked first). The screen hears the outcome as messages (`Sidebar.ChatChosen`, `ChatRenamed`,
`ChatDeleted`), as it owns which chat is open. Listing may fail (`HistoryError`): what the
screen asks for raises, for the screen to report; what the sidebar does by itself (a search, a
rename, a deletion) it reports with a `HistoryFailed` message.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from textual import events, on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Input, OptionList
from textual.widgets.option_list import Option

from gptoss_local.i18n import N_, _
from gptoss_local.session.errors import HistoryError
from gptoss_local.session.history import History
from gptoss_local.session.records import Chat
from gptoss_local.tui.history_errors import reports_history_errors
from gptoss_local.tui.messages import HistoryFailed
from gptoss_local.tui.modals import ConfirmScreen, RenameScreen
from gptoss_local.tui.widgets import ChatInput


class ChatList(OptionList):
    """The saved chats; selecting one (Enter or a click) opens it."""

    DEFAULT_CSS = "ChatList { height: 1fr; }"

    async def _on_key(self, event: events.Key) -> None:
        focused = self.app.focused
        if focused is not None and focused is not self:
            # Typed ahead: keys queued here before the focus moved on (a chat picked, the
            # sidebar closed) are meant for where the focus is now, not for this list.
            event.stop()
            event.prevent_default()
            focused.post_message(events.Key(event.key, event.character))
            return
        option = self.highlighted_option
        if event.key == "enter" and option is not None:
            # Pick the chat straight to the screen (ahead of anything typed after), and move the
            # focus to the message box now (focus() is deferred), so what is typed goes there.
            event.stop()
            event.prevent_default()
            self.screen.post_message(Sidebar.ChatChosen(self.chat_id(option)))
            self.screen.set_focus(self.screen.query_one(ChatInput))
            return
        await super()._on_key(event)

    def show(self, chats: list[Chat], current: int | None) -> None:
        """List `chats`, highlighting the open one."""
        self.clear_options()
        # Content, not a str: a title is the user's text and must not be read as markup.
        self.add_options(Option(Content(c.title or _("(untitled)")), id=str(c.id)) for c in chats)
        ids = [chat.id for chat in chats]
        if ids:  # the open chat, else the first, so that Enter always picks one
            self.highlighted = ids.index(current) if current in ids else 0

    @staticmethod
    def chat_id(option: Option) -> int:
        """The chat id of one of the options."""
        return int(option.id or 0)


class Sidebar(Vertical):
    """The search box above the list of chats, listed again as the search changes.

    Args:
        history: Where the chats are listed from (and renamed and deleted in).
    """

    DEFAULT_CSS = """
    Sidebar { width: 32; max-width: 40%; dock: left; height: 1fr; margin-top: 1; }
    Sidebar Input { margin: 0; }
    """

    @dataclass
    class ChatChosen(Message):
        """The user picked a saved chat to open."""

        chat_id: int

    @dataclass
    class ChatRenamed(Message):
        """A chat has a new title."""

        chat_id: int
        title: str

    @dataclass
    class ChatDeleted(Message):
        """A chat and all its messages are gone from the history."""

        chat_id: int

    def __init__(self, history: History, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.history = history
        self._current: int | None = None  # the open chat, highlighted in the list

    def compose(self) -> ComposeResult:
        yield Input(placeholder=_("Search chats"), id="chat_search")
        yield ChatList(id="chats")

    @property
    def search(self) -> str:
        """What the search box holds, stripped."""
        return self.query_one(Input).value.strip()

    def list_chats(self, current: int | None) -> None:
        """List the saved chats again (those matching the search, if any), `current` highlighted.

        Raises:
            HistoryError: The history cannot be read.
        """
        self._current = current
        chats = self.history.list_chats(search=self.search or None)
        self.query_one(ChatList).show(chats, current)

    def toggle(self, current: int | None) -> bool:
        """Show the list (focused), or hide it; whether it is shown now.

        Raises:
            HistoryError: The history cannot be read.
        """
        self.display = not self.display
        if self.display:
            self.list_chats(current)
            self.query_one(ChatList).focus()
        return self.display

    def open_search(self, current: int | None) -> None:
        """Show the list, with the focus in the search box.

        Raises:
            HistoryError: The history cannot be read.
        """
        if not self.display:
            self.display = True
            self.list_chats(current)
        self.query_one("#chat_search", Input).focus()

    @reports_history_errors(N_("Cannot rename the chat"))
    def rename(self, chat_id: int) -> None:
        """Ask for a new title of the open chat, `chat_id`."""
        title = self.history.get_chat(chat_id).title
        self.app.push_screen(RenameScreen(title), partial(self._rename, chat_id))

    @reports_history_errors(N_("Cannot rename the chat"))
    def _rename(self, chat_id: int, title: str | None) -> None:
        if title:
            self.history.rename_chat(chat_id, title)
            self.list_chats(chat_id)
            self.post_message(self.ChatRenamed(chat_id, title))

    @reports_history_errors(N_("Cannot delete the chat"))
    def delete(self, chat_id: int) -> None:
        """Delete chat `chat_id` and its messages, after asking."""
        title = self.history.get_chat(chat_id).title
        if title:
            question = _("Delete “{title}” and all its messages?").format(title=title)
        else:
            question = _("Delete this chat and all its messages?")
        self.app.push_screen(ConfirmScreen(question), partial(self._delete, chat_id))

    @reports_history_errors(N_("Cannot delete the chat"))
    def _delete(self, chat_id: int, yes: bool | None) -> None:
        if yes:
            self.history.delete_chat(chat_id)
            self.post_message(self.ChatDeleted(chat_id))

    def history_failed(self, error: HistoryError, title: str) -> None:
        """Report a failure of the history to the screen, which shows and remembers it."""
        self.post_message(HistoryFailed(error, title))

    @on(OptionList.OptionSelected, "#chats")
    def _clicked(self, event: OptionList.OptionSelected) -> None:
        event.stop()  # Enter posts `ChatChosen` itself (`ChatList._on_key`): this is a click
        self.post_message(self.ChatChosen(ChatList.chat_id(event.option)))

    @on(Input.Changed, "#chat_search")
    @reports_history_errors(N_("Cannot list the chats"))
    def _search_changed(self) -> None:
        self.list_chats(self._current)

    @on(Input.Submitted, "#chat_search")
    def _search_submitted(self) -> None:
        """Enter in the search box moves to the list, where arrows and Enter pick a chat."""
        self.query_one(ChatList).focus()
