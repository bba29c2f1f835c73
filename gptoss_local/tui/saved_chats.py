"""The saved chats from the chat screen: the sidebar shown or searched, the open chat renamed
or deleted, and another chat opened in its place.

The sidebar (`sidebar.Sidebar`) lists, asks and posts what came of it; the chat screen's actions
and handlers call these functions with itself, and what they need of it is `SavedChatsScreen`. A
failure of the history is shown and remembered (`reports_history_errors`).
"""

from __future__ import annotations

from typing import Protocol

from gptoss_local.chat.chat_state import ChatState
from gptoss_local.i18n import N_, _
from gptoss_local.tui.history_errors import reports_history_errors
from gptoss_local.tui.reply_flow import ReplyScreen
from gptoss_local.tui.widgets import ChatInput


class SavedChatsScreen(ReplyScreen, Protocol):
    """What the saved chats' actions need of the chat screen, besides what a reply does."""

    state: ChatState
    input: ChatInput

    def idle(self) -> bool: ...


@reports_history_errors(N_("Cannot list the chats"))
def toggle_sidebar(screen: SavedChatsScreen) -> None:
    """Show or hide the list of saved chats (hidden: back to typing)."""
    if not screen.sidebar.toggle(screen.state.chat_id):
        screen.input.focus()


@reports_history_errors(N_("Cannot list the chats"))
def search(screen: SavedChatsScreen) -> None:
    """Open the sidebar with the focus in its search box."""
    screen.sidebar.open_search(screen.state.chat_id)


def rename(screen: SavedChatsScreen) -> None:
    """Ask for a new title of the open chat (a new chat has none to change)."""
    if screen.state.chat_id is not None:
        screen.sidebar.rename(screen.state.chat_id)


def delete(screen: SavedChatsScreen) -> None:
    """Delete the open chat after asking (not while its reply is being written)."""
    if screen.state.chat_id is not None and screen.idle():
        screen.sidebar.delete(screen.state.chat_id)


@reports_history_errors(N_("Cannot open the chat"))
async def open_chat(screen: SavedChatsScreen, chat_id: int | None) -> None:
    """Show the chat `chat_id` (None: a new one) in the log, unless a reply is being written."""
    if not screen.idle():
        return
    screen.state.switch(chat_id)
    await screen.render_chat()
    screen.sidebar.list_chats(chat_id)
    screen.input.focus()


async def deleted(screen: SavedChatsScreen) -> None:
    """The open chat was deleted: a new chat takes its place."""
    await open_chat(screen, None)
    screen.notify(_("Chat deleted."), timeout=2)
