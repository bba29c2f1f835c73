"""The sidebar of saved chats, most recent first."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from gptoss_local.session.records import Chat


class ChatList(OptionList):
    """The saved chats; selecting one (Enter or a click) opens it."""

    DEFAULT_CSS = "ChatList { width: 32; dock: left; height: 1fr; }"

    def show(self, chats: list[Chat], current: int | None) -> None:
        """List `chats`, highlighting the open one."""
        self.clear_options()
        # Content, not a str: a title is the user's text and must not be read as markup.
        self.add_options(Option(Content(c.title or "(untitled)"), id=str(c.id)) for c in chats)
        ids = [chat.id for chat in chats]
        if current in ids:
            self.highlighted = ids.index(current)

    @staticmethod
    def chat_id(option: Option) -> int:
        """The chat id of one of the options."""
        return int(option.id or 0)
