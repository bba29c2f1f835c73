"""The chat screen: the log of messages, the input, the status bar, and one reply at a time.

The screen composes the widgets, holds the chat's bindings and hears what workers, services and
widgets report (as messages), handing each to the part whose it is: the reply's life to
`reply_flow.ReplyFlow` (in the order the worker posted it), the next reply's prefill to
`prefill.Prefill`, changes to the open chat (a message sent, the effort, the instructions, an
edit, a reply written again) to `editing`, and the model's changes (F9, a load) to
`model_changes`. The services are plain objects (`chat.services.ChatServices`) whose threads
are the screen's workers. The input box is emptied only once a message is saved and its reply
started: if the history fails, the text stays there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.screen import Screen
from textual.widgets import Footer, Header

from gptoss_local.chat.services import ChatServices
from gptoss_local.chat.tool_host import ToolHost
from gptoss_local.i18n import N_, _
from gptoss_local.session.errors import HistoryError
from gptoss_local.session.records import StoredMessage
from gptoss_local.tui import copying, editing, exporting, model_changes, saved_chats
from gptoss_local.tui.actions import chat_bindings
from gptoss_local.tui.attachment_bar import AttachmentBar
from gptoss_local.tui.attachment_widgets import AttachmentChips
from gptoss_local.tui.history_errors import reports_history_errors
from gptoss_local.tui.loading import LoadingBanner
from gptoss_local.tui.mention_menu import MentionCompleter, MentionMenu
from gptoss_local.tui.messages import (
    BackendLoaded,
    HistoryFailed,
    ModelChosen,
    ModelLoadFailed,
    ModelLoadStarted,
    ReplyFinished,
    ReplyReport,
    ToolsOpened,
)
from gptoss_local.tui.prefill import Prefill
from gptoss_local.tui.reply_flow import ReplyFlow
from gptoss_local.tui.sidebar import Sidebar
from gptoss_local.tui.status import StatusBar
from gptoss_local.tui.widgets import ChatInput, ChatLog


class ChatScreen(Screen[None]):
    """The chat, with its bindings (`actions.ACTIONS`) and the services it drives.

    Args:
        services: What the chat runs on (`chat.services.ChatServices`).
    """

    BINDINGS: ClassVar[list[BindingType]] = chat_bindings()

    def __init__(self, services: ChatServices) -> None:
        super().__init__()
        self.services = services
        self.history, self.state = services.history, services.state
        self.generation = services.generation  # replaced when F9 loads another model
        self.history_error: HistoryError | None = None  # see `history_failed`
        self.input = ChatInput(id="input", soft_wrap=True, show_line_numbers=False)
        self.chat_log = ChatLog(id="log")
        self.sidebar = Sidebar(self.history, id="sidebar")
        self.banner = LoadingBanner(services.opener, services.model_name, services.setup,
                                    services.engine, id="loading")  # fmt: skip
        self.host = self.banner.host
        self.tools = ToolHost(services.tools, self._in_worker("tools"))
        self.prefill = Prefill(self, self.state, self._in_worker("warm"))
        self.status = StatusBar(self.state.effort, services.vram)
        self.attachments = AttachmentBar(self, services, self.status, lambda: self.host.backend)
        self.mentions = MentionMenu(id="mentions")
        self.input.completer = MentionCompleter(self.input, self.mentions, services.root)
        self.reply = ReplyFlow(self, services, self._in_worker("reply"))
        self._sent: list[str] = []  # the messages sent in this session, for input history

    @property
    def busy(self) -> bool:
        """Whether a reply is being written."""
        return self.reply.busy

    def compose(self) -> ComposeResult:
        yield Header()
        yield self.sidebar
        yield self.banner
        yield self.chat_log
        yield self.attachments.chips
        yield self.input
        yield self.mentions
        yield self.status
        yield Footer()

    async def on_mount(self) -> None:
        self.chat_log.anchor()
        await self.render_chat()
        self.input.focus()
        self.tools.open(lambda problems: self.post_message(ToolsOpened(problems)))
        if not self.banner.needs_first_run and self.services.offer is None:
            self.banner.load()  # else the app asks first (`ChatApp`)
        for warning in self.services.warnings:  # what the plan warned of, without hiding the chat
            self.notify(warning, title=_("About the plan"), severity="warning", timeout=12,
                        markup=False)  # fmt: skip

    def _in_worker(self, group: str) -> Callable[[Callable[[], None]], None]:
        """Runs work on a thread worker of this screen, in `group`."""

        def run(work: Callable[[], None]) -> None:
            self.run_worker(work, thread=True, group=group, exit_on_error=False)

        return run

    # --- sending ----------------------------------------------------------------------------------

    @on(ChatInput.Submitted)
    async def _send(self, message: ChatInput.Submitted) -> None:
        text = message.text.strip()
        if await editing.send(self, text):
            self._sent.append(text)

    # --- attachments ------------------------------------------------------------------------------

    def action_attach_file(self) -> None:
        """Pick a file or folder to attach to the next message."""
        self.attachments.pick()

    @on(AttachmentChips.Changed)
    def _chips_changed(self, message: AttachmentChips.Changed) -> None:
        if not message.attachments:  # the last chip removed: back to typing
            self.input.focus()

    # --- the reply (the flow's) -------------------------------------------------------------------

    @on(ReplyReport)
    async def _reply_reported(self, message: ReplyReport) -> None:
        """What the reply's worker reports goes to the flow in the order it came."""
        await self.reply.hear(message)

    @on(ReplyFinished)
    async def reply_finished(self, message: ReplyFinished) -> None:
        """Show how the reply ended and its figures; prefill for the next message."""
        await self.reply.finished(message)

    def take_back(self, sent: StoredMessage) -> None:
        """A message that did not fit goes back to the box with its files, if the box is empty."""
        if not self.input.text.strip():
            self.input.begin_edit(sent.content)
            self.attachments.restore(sent)

    @on(ToolsOpened)
    def _tools_opened(self, message: ToolsOpened) -> None:
        for problem in message.problems:
            self.notify(problem, title=_("A tool is not available"), severity="warning",
                        timeout=15, markup=False)  # fmt: skip
        self.prefill.tools_opened()

    def stop(self) -> bool:
        """Stop the reply being written (it is saved as stopped) and the prefill, as the app
        quits; whether a reply was being written."""
        busy = self.busy
        self.reply.cancel()
        self.prefill.stop()
        return busy

    def close_model(self) -> None:
        """Free the model (after the app has exited): a load still running is told to stop, and
        so is a reply (an exit that did not go through Quit may leave one running)."""
        self.stop()
        self.host.close()
        self.tools.close()

    # --- the open chat's actions ------------------------------------------------------------------

    def action_stop(self) -> None:
        """Stop the reply being written (saved as stopped), or cancel an edit (Ctrl+L)."""
        editing.stop(self)

    def action_cycle_effort(self) -> None:
        """Switch to the next reasoning effort, stored with the chat."""
        editing.cycle_effort(self)

    def action_toggle_reasoning(self) -> None:
        """Open or close the reasoning of every reply."""
        self.chat_log.toggle_reasoning()

    async def action_new_chat(self) -> None:
        """Start an empty chat (created in the history when the first message is sent)."""
        await self.open_chat(None)

    async def action_regenerate(self) -> None:
        """Delete the last reply and write it again."""
        await editing.regenerate(self)

    def action_edit_last(self) -> None:
        """Edit the last user message in the input box (Enter replaces it, Esc keeps it)."""
        editing.edit_last(self)

    def action_edit_instructions(self) -> None:
        """Edit the open chat's instructions; a new chat gets them when it is saved."""
        editing.edit_instructions(self)

    def action_copy_message(self) -> None:
        """Copy the focused message, else the last reply's answer (its Markdown source)."""
        copying.copy_message(self)

    def action_copy_code(self) -> None:
        """Copy a code block of the focused message (else the last reply); ask which if several."""
        copying.copy_code(self)

    def action_focus_message(self, step: int) -> None:
        """Focus the message `step` places from the focused one; past the newest, the input."""
        copying.focus_message(self, step)

    # --- the saved chats (the sidebar's) ----------------------------------------------------------

    def action_toggle_sidebar(self) -> None:
        """Show or hide the list of saved chats."""
        saved_chats.toggle_sidebar(self)

    def action_search_chats(self) -> None:
        """Open the sidebar with the focus in its search box."""
        saved_chats.search(self)

    def action_rename_chat(self) -> None:
        """Ask for a new title of the open chat."""
        saved_chats.rename(self)

    def action_delete_chat(self) -> None:
        """Delete the open chat after asking."""
        saved_chats.delete(self)

    @reports_history_errors(N_("Cannot export the chat"))
    def action_export_chat(self) -> None:
        """Export the open chat as Markdown, asking for the file (offered in the folder the app
        was started from); a new chat has nothing to export."""
        exporting.export_chat(self, self.history, self.state.chat_id)

    async def open_chat(self, chat_id: int | None) -> None:
        """Show the chat `chat_id` (None: a new one) in the log."""
        await saved_chats.open_chat(self, chat_id)

    @on(Sidebar.ChatChosen)
    async def _chat_chosen(self, message: Sidebar.ChatChosen) -> None:
        await self.open_chat(message.chat_id)

    @on(Sidebar.ChatRenamed)
    def _chat_renamed(self, message: Sidebar.ChatRenamed) -> None:
        self.sub_title = message.title

    @on(Sidebar.ChatDeleted)
    async def _chat_deleted(self, _message: Sidebar.ChatDeleted) -> None:
        await saved_chats.deleted(self)

    # --- what the screen shows --------------------------------------------------------------------

    async def render_chat(self) -> None:
        """Show the open chat: its messages, its effort and its last reply's figures."""
        messages = self.state.messages()
        await self.chat_log.show(messages, self.state.compactions())
        # Up recalls this chat's messages; in a new chat, those sent earlier in this session.
        past = [m.content for m in messages if m.role == "user"]
        self.input.set_past(past if self.state.chat_id is not None else self._sent)
        self.state.load_effort()
        # The figures of this chat's last reply (none in a new chat), not of the chat before.
        replies = [m.stats for m in messages if m.role == "assistant" and m.stats is not None]
        self.status.stats = replies[-1] if replies else None
        self.show_status()
        self.prefill.warm_up()

    def show_status(self) -> None:
        """The chat's title in the header, its effort in the status bar."""
        self.sub_title = self.state.title() or _("new chat")
        self.status.effort = self.state.effort

    def idle(self) -> bool:
        """Whether no reply is being written; if one is, the user is told to wait."""
        if self.busy:
            self.notify(_("A reply is being written: wait, or press Esc to stop it."))
        return not self.busy

    @on(HistoryFailed)
    def _history_failed(self, message: HistoryFailed) -> None:
        self.history_failed(message.error, message.title)

    def history_failed(self, error: HistoryError, title: str) -> None:
        """Show a failure of the history and remember it: `gptoss-local chat` says it again at
        exit (exit code 2) and saves what is left in the input box."""
        self.history_error = error
        self.notify(str(error), title=title, severity="error", timeout=30, markup=False)

    # --- the model (the banner's) -----------------------------------------------------------------

    def action_choose_model(self) -> None:
        """Open the set-up screen again (F9); starting there replaces the loaded model (with
        --model-path, the same file with another context)."""
        model_changes.choose_again(self)

    @on(ModelChosen)
    def _model_chosen(self, message: ModelChosen) -> None:
        model_changes.chosen(self, message)

    @on(ModelLoadStarted)
    @on(ModelLoadFailed)
    def _loading(self, message: ModelLoadStarted | ModelLoadFailed) -> None:
        model_changes.loading(self, message)

    @on(BackendLoaded)
    def model_loaded(self, message: BackendLoaded) -> None:
        """The model is ready: show it, prefill, and send the message held for it if the chat,
        the edit and the text in the box are still what they were."""
        model_changes.loaded(self, message)
