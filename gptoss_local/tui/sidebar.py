"""The sidebar: a search box over the saved chats, and the chats, most recent first.

Picking a chat posts `ChatList.OptionSelected` to the screen, which opens it. Listing may fail
(`HistoryError`): the screen's actions report what they call; what the sidebar does by itself
(the search changed) it reports with a `HistoryFailed` message.
"""

from __future__ import annotations

from textual import events, on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Input, OptionList
from textual.widgets.option_list import Option

from gptoss_local.session.errors import HistoryError
from gptoss_local.session.history import History
from gptoss_local.session.records import Chat
from gptoss_local.tui.messages import HistoryFailed
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
        if event.key == "enter" and option is not None and self.highlighted is not None:
            # Pick the chat straight to the screen (ahead of anything typed after), and move the
            # focus to the message box now (focus() is deferred), so what is typed goes there.
            event.stop()
            event.prevent_default()
            self.screen.post_message(self.OptionSelected(self, option, self.highlighted))
            self.screen.set_focus(self.screen.query_one(ChatInput))
            return
        await super()._on_key(event)

    def show(self, chats: list[Chat], current: int | None) -> None:
        """List `chats`, highlighting the open one."""
        self.clear_options()
        # Content, not a str: a title is the user's text and must not be read as markup.
        self.add_options(Option(Content(c.title or "(untitled)"), id=str(c.id)) for c in chats)
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
        history: Where the chats are listed from.
    """

    DEFAULT_CSS = """
    Sidebar { width: 32; max-width: 40%; dock: left; height: 1fr; margin-top: 1; }
    Sidebar Input { margin: 0; }
    """

    def __init__(self, history: History, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.history = history
        self._current: int | None = None  # the open chat, highlighted in the list

    def compose(self) -> ComposeResult:
        yield Input(placeholder="Search chats", id="chat_search")
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
        """Show the list (focused), or hide it; whether it is shown now."""
        self.display = not self.display
        if self.display:
            self.list_chats(current)
            self.query_one(ChatList).focus()
        return self.display

    def open_search(self, current: int | None) -> None:
        """Show the list, with the focus in the search box."""
        if not self.display:
            self.display = True
            self.list_chats(current)
        self.query_one("#chat_search", Input).focus()

    @on(Input.Changed, "#chat_search")
    def _search_changed(self) -> None:
        try:
            self.list_chats(self._current)
        except HistoryError as exc:
            self.post_message(HistoryFailed(exc, "Cannot list the chats"))

    @on(Input.Submitted, "#chat_search")
    def _search_submitted(self) -> None:
        """Enter in the search box moves to the list, where arrows and Enter pick a chat."""
        self.query_one(ChatList).focus()
