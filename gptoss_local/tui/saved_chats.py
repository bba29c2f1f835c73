"""The chat screen's actions on saved chats: regenerate, edit, open, instructions, rename, delete,
and the sidebar that lists them.

Functions of the `ChatScreen`, kept apart so the screen's module stays about sending and
streaming; the history work itself is `chat.chat_state.ChatState`'s. An action whose history call
fails (`HistoryError`: the file damaged, the disk full) shows why and remembers the error, which
`gptoss-local chat` reports again at exit (`reports_history_errors`).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

from gptoss_local.session.errors import HistoryError
from gptoss_local.tui.modals import ConfirmScreen, InstructionsScreen, RenameScreen
from gptoss_local.tui.sidebar import Sidebar

if TYPE_CHECKING:
    from gptoss_local.tui.chat_screen import ChatScreen

_Function = TypeVar("_Function", bound=Callable[..., Any])


class _Reports(Protocol):
    def history_failed(self, error: HistoryError, title: str) -> None: ...


def reports_history_errors(title: str) -> Callable[[_Function], _Function]:
    """Decorate a handler (sync or async) of the chat screen, or a function taking the screen
    first, so that a `HistoryError` it raises is shown with `title` and remembered
    (`ChatScreen.history_failed`) instead of ending the app."""

    def decorate(function: _Function) -> _Function:
        if inspect.iscoroutinefunction(function):

            @functools.wraps(function)
            async def run_async(screen: _Reports, *args: object, **kwargs: object) -> object:
                try:
                    return await function(screen, *args, **kwargs)
                except HistoryError as exc:
                    screen.history_failed(exc, title)
                    return None

            return cast(_Function, run_async)

        @functools.wraps(function)
        def run(screen: _Reports, *args: object, **kwargs: object) -> object:
            try:
                return function(screen, *args, **kwargs)
            except HistoryError as exc:
                screen.history_failed(exc, title)
                return None

        return cast(_Function, run)

    return decorate


@reports_history_errors("Cannot regenerate the reply")
async def regenerate(screen: ChatScreen) -> None:
    """Delete the last reply and write it again."""
    chat_id = screen.state.chat_id
    if not screen.idle() or chat_id is None:
        return
    dropped = screen.state.drop_last_reply()
    if dropped is None:  # an empty chat: nothing to answer
        return
    if dropped:
        await screen.render_chat()
    await screen.start_reply(chat_id)


@reports_history_errors("Cannot edit the last message")
async def edit_last(screen: ChatScreen) -> None:
    """Put the last user message into the input box to edit; sending it replaces the old
    message and what followed, Esc keeps them (nothing is deleted before that)."""
    if not screen.idle() or screen.state.chat_id is None:
        return
    text = screen.state.start_edit()
    if text is None:
        return
    box = screen.input
    box.text = text
    box.move_cursor(box.document.end)
    box.focus()
    screen.notify("Editing your last message: Enter sends it in place of the old one and its "
                  "reply; Esc keeps them.", timeout=6)  # fmt: skip


@reports_history_errors("Cannot open the chat")
async def open_chat(screen: ChatScreen, chat_id: int | None) -> None:
    """Show the chat `chat_id` (None: a new one) in the log."""
    if not screen.idle():
        return
    screen.state.switch(chat_id)
    await screen.render_chat()
    screen.refresh_sidebar()
    screen.input.focus()


@reports_history_errors("Cannot read the instructions")
def edit_instructions(screen: ChatScreen) -> None:
    """Edit the open chat's instructions; a new chat gets them when it is saved."""
    chat_id = screen.state.chat_id
    current = screen.state.current_instructions()
    screen.app.push_screen(InstructionsScreen(current),
                           lambda text: _set_instructions(screen, chat_id, text))  # fmt: skip


@reports_history_errors("Cannot save the instructions")
def _set_instructions(screen: ChatScreen, chat_id: int | None, text: str | None) -> None:
    if text is None:
        return
    screen.state.set_instructions(chat_id, text)
    screen.notify("Instructions saved." if text else "Instructions removed.", timeout=2)
    screen.warm_up()  # they are in the developer message, at the start of the prompt


@reports_history_errors("Cannot rename the chat")
def rename(screen: ChatScreen) -> None:
    """Ask for a new title of the open chat."""
    chat_id = screen.state.chat_id
    if chat_id is None:
        return
    screen.app.push_screen(RenameScreen(screen.history.get_chat(chat_id).title),
                           lambda title: _rename(screen, chat_id, title))  # fmt: skip


@reports_history_errors("Cannot rename the chat")
def _rename(screen: ChatScreen, chat_id: int, title: str | None) -> None:
    if title:
        screen.history.rename_chat(chat_id, title)
        screen.refresh_sidebar()
        screen.sub_title = title


@reports_history_errors("Cannot delete the chat")
def delete(screen: ChatScreen) -> None:
    """Delete the open chat after asking."""
    chat_id = screen.state.chat_id
    if chat_id is None or not screen.idle():
        return
    title = screen.history.get_chat(chat_id).title or "this chat"
    question = f"Delete “{title}” and all its messages?"
    screen.app.push_screen(ConfirmScreen(question), lambda yes: _delete(screen, chat_id, yes))


@reports_history_errors("Cannot delete the chat")
async def _delete(screen: ChatScreen, chat_id: int, yes: bool | None) -> None:
    if not yes:
        return
    screen.history.delete_chat(chat_id)
    await screen.open_chat(None)
    screen.notify("Chat deleted.", timeout=2)


@reports_history_errors("Cannot list the chats")
def toggle_sidebar(screen: ChatScreen) -> None:
    """Show or hide the list of saved chats."""
    if not screen.query_one(Sidebar).toggle(screen.state.chat_id):
        screen.input.focus()


@reports_history_errors("Cannot list the chats")
def search(screen: ChatScreen) -> None:
    """Open the sidebar with the focus in its search box."""
    screen.query_one(Sidebar).open_search(screen.state.chat_id)


def refresh_sidebar(screen: ChatScreen) -> None:
    """List the saved chats again (those matching the search, if any).

    Raises:
        HistoryError: The history cannot be read.
    """
    screen.query_one(Sidebar).list_chats(screen.state.chat_id)
