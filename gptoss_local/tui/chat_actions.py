"""The app's actions on saved chats: regenerate, edit, new, switch, rename, delete, sidebar.

A mixin of `ChatApp`, kept apart so the app module stays about streaming. An action whose
history call fails (`HistoryError`: the file damaged, the disk full) shows why and remembers the
error, which `gptoss-local chat` reports again at exit (`reports_history_errors`).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

from textual.widgets import Input

from gptoss_local.session.errors import HistoryError
from gptoss_local.tui.help import HelpScreen
from gptoss_local.tui.modals import ConfirmScreen, InstructionsScreen, RenameScreen
from gptoss_local.tui.sidebar import ChatList, Sidebar
from gptoss_local.tui.widgets import ChatInput

if TYPE_CHECKING:
    from textual.app import App

    from gptoss_local.session.history import History

    _Base = App[None]
else:
    _Base = object

_Method = TypeVar("_Method", bound=Callable[..., Any])


def reports_history_errors(title: str) -> Callable[[_Method], _Method]:
    """Decorate a handler (sync or async) so that a `HistoryError` it raises is shown with
    `title` and remembered (`ChatActions.history_failed`) instead of ending the app."""

    def decorate(method: _Method) -> _Method:
        if inspect.iscoroutinefunction(method):

            @functools.wraps(method)
            async def run_async(self: ChatActions, *args: object, **kwargs: object) -> object:
                try:
                    return await method(self, *args, **kwargs)
                except HistoryError as exc:
                    self.history_failed(exc, title)
                    return None

            return cast(_Method, run_async)

        @functools.wraps(method)
        def run(self: ChatActions, *args: object, **kwargs: object) -> object:
            try:
                return method(self, *args, **kwargs)
            except HistoryError as exc:
                self.history_failed(exc, title)
                return None

        return cast(_Method, run)

    return decorate


class ChatActions(_Base):
    """Actions on the history; the app provides the attributes and methods declared here."""

    history: History
    chat_id: int | None
    instructions: str  # of a new chat not yet saved; a saved chat keeps its own
    editing: int | None = None  # the user message being edited (Ctrl+L), until sent or Esc
    history_error: HistoryError | None = None  # the last failure of the history, for the exit

    @property
    def busy(self) -> bool:
        """Whether a reply is being written (the app overrides this)."""
        raise NotImplementedError

    async def _start_reply(self, chat_id: int) -> bool:
        raise NotImplementedError

    async def _render_chat(self) -> None:
        raise NotImplementedError

    if TYPE_CHECKING:  # provided by `Warming` (a stub here would shadow it in the app's MRO)

        def warm_up(self) -> None: ...

    def history_failed(self, error: HistoryError, title: str) -> None:
        """Show a failure of the history and remember it: `gptoss-local chat` says it again at
        exit (exit code 2) and saves what is left in the input box."""
        self.history_error = error
        self.notify(str(error), title=title, severity="error", timeout=30, markup=False)

    def _idle(self) -> bool:
        if self.busy:
            self.notify("A reply is being written: wait, or press Esc to stop it.")
        return not self.busy

    @reports_history_errors("Cannot regenerate the reply")
    async def action_regenerate(self) -> None:
        """Delete the last reply and write it again."""
        if not self._idle() or self.chat_id is None:
            return
        messages = self.history.messages(self.chat_id)
        if not messages:
            return
        if messages[-1].role == "assistant":
            self.history.delete_from(messages[-1].id)
            await self._render_chat()
        await self._start_reply(self.chat_id)

    @reports_history_errors("Cannot edit the last message")
    async def action_edit_last(self) -> None:
        """Put the last user message into the input box to edit; sending it replaces the old
        message and what followed, Esc keeps them (nothing is deleted before that)."""
        if not self._idle() or self.chat_id is None:
            return
        users = [m for m in self.history.messages(self.chat_id) if m.role == "user"]
        if not users:
            return
        self.editing = users[-1].id
        box = self.query_one(ChatInput)
        box.text = users[-1].content
        box.move_cursor(box.document.end)
        box.focus()
        self.notify("Editing your last message: Enter sends it in place of the old one and its "
                    "reply; Esc keeps them.", timeout=6)  # fmt: skip

    async def replace_edited(self) -> None:
        """The edited message is being sent: the old one and what followed go now."""
        editing, self.editing = self.editing, None
        if editing is not None and self.chat_id is not None:
            self.history.delete_from(editing)
            await self._render_chat()

    def cancel_edit(self) -> bool:
        """Esc while editing: keep the old message, empty the box. False when not editing."""
        if self.editing is None:
            return False
        self.editing = None
        self.query_one(ChatInput).clear()
        self.notify("Edit cancelled: your message and its reply are kept.", timeout=3)
        return True

    async def action_new_chat(self) -> None:
        """Start an empty chat (created in the history when the first message is sent)."""
        await self.open_chat(None)

    @reports_history_errors("Cannot open the chat")
    async def open_chat(self, chat_id: int | None) -> None:
        """Show the chat `chat_id` (None: a new one) in the log."""
        if not self._idle():
            return
        self.chat_id, self.instructions, self.editing = chat_id, "", None
        await self._render_chat()
        self.refresh_sidebar()
        self.query_one(ChatInput).focus()

    @reports_history_errors("Cannot list the chats")
    def action_toggle_sidebar(self) -> None:
        """Show or hide the list of saved chats."""
        sidebar = self.query_one(Sidebar)
        sidebar.display = not sidebar.display
        if sidebar.display:
            self.refresh_sidebar()
            sidebar.query_one(ChatList).focus()
        else:
            self.query_one(ChatInput).focus()

    @reports_history_errors("Cannot list the chats")
    def action_search_chats(self) -> None:
        """Open the sidebar with the focus in its search box."""
        sidebar = self.query_one(Sidebar)
        if not sidebar.display:
            sidebar.display = True
            self.refresh_sidebar()
        sidebar.query_one("#chat_search", Input).focus()

    def refresh_sidebar(self) -> None:
        """List the saved chats again (those matching the search, if any)."""
        sidebar = self.query_one(Sidebar)
        chats = self.history.list_chats(search=sidebar.search or None)
        sidebar.query_one(ChatList).show(chats, self.chat_id)

    # Handlers by name: `@on` is only collected on Textual classes, and this mixin is not one.
    @reports_history_errors("Cannot list the chats")
    def on_input_changed(self, event: Input.Changed) -> None:
        """List the chats again as the search changes."""
        if event.input.id == "chat_search":
            self.refresh_sidebar()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter in the search box moves to the list, where arrows and Enter pick a chat."""
        if event.input.id == "chat_search":
            self.query_one(ChatList).focus()

    async def on_option_list_option_selected(self, event: ChatList.OptionSelected) -> None:
        """Open the chat picked in the sidebar."""
        await self.open_chat(ChatList.chat_id(event.option))

    def action_help(self) -> None:
        """Show every key and what it does."""
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    @reports_history_errors("Cannot read the instructions")
    def action_edit_instructions(self) -> None:
        """Edit the open chat's instructions; a new chat gets them when it is saved."""
        chat_id = self.chat_id
        current = self.instructions
        if chat_id is not None:
            current = self.history.get_chat(chat_id).instructions or ""
        self.push_screen(InstructionsScreen(current),
                         lambda text: self._set_instructions(chat_id, text))  # fmt: skip

    @reports_history_errors("Cannot save the instructions")
    def _set_instructions(self, chat_id: int | None, text: str | None) -> None:
        if text is None:
            return
        if chat_id is None:
            self.instructions = text
        else:
            self.history.set_instructions(chat_id, text)
        self.notify("Instructions saved." if text else "Instructions removed.", timeout=2)
        self.warm_up()  # they are in the developer message, at the start of the prompt

    @reports_history_errors("Cannot rename the chat")
    def action_rename_chat(self) -> None:
        """Ask for a new title of the open chat."""
        chat_id = self.chat_id
        if chat_id is None:
            return
        self.push_screen(RenameScreen(self.history.get_chat(chat_id).title),
                         lambda title: self._rename(chat_id, title))  # fmt: skip

    @reports_history_errors("Cannot rename the chat")
    def _rename(self, chat_id: int, title: str | None) -> None:
        if title:
            self.history.rename_chat(chat_id, title)
            self.refresh_sidebar()
            self.sub_title = title

    @reports_history_errors("Cannot delete the chat")
    def action_delete_chat(self) -> None:
        """Delete the open chat after asking."""
        chat_id = self.chat_id
        if chat_id is None or not self._idle():
            return
        title = self.history.get_chat(chat_id).title or "this chat"
        question = f"Delete “{title}” and all its messages?"
        self.push_screen(ConfirmScreen(question), lambda yes: self._delete(chat_id, yes))

    @reports_history_errors("Cannot delete the chat")
    async def _delete(self, chat_id: int, yes: bool | None) -> None:
        if not yes:
            return
        self.history.delete_chat(chat_id)
        await self.open_chat(None)
        self.notify("Chat deleted.", timeout=2)
