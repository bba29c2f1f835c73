"""The chat screen: the log of messages, the input, the status bar, and one reply at a time.

The reply's life (saved, written on a thread worker, its tool calls, how it ended) is
`reply_flow.ReplyFlow`'s; the engine's worker talks to the screen only by posting messages, and
the screen hands them to the flow in the order they came. The input box is emptied only once a
message is saved and its reply started: if the history fails, the text stays there.

The services are plain objects (`chat.services.ChatServices`): which chat is open (`ChatState`),
the model (`ModelHost`, which the loading banner holds and loads) and the prefill while the user
types (`prefill.Prefill`); their threads are workers, and they report back through messages. The
widgets own what they show: the log the reply being written (each turn's view its tool calls
and their approval), the sidebar the saved chats, the status bar live VRAM. The screen owns
which chat is open and the model's settings, and hears the widgets' outcomes as messages.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.screen import Screen
from textual.widgets import Footer, Header

from gptoss_local.chat.model_host import Held
from gptoss_local.chat.services import ChatServices
from gptoss_local.chat.tool_host import ToolHost
from gptoss_local.i18n import N_, _
from gptoss_local.kinds import effort_word
from gptoss_local.session.errors import HistoryError
from gptoss_local.session.records import StoredMessage
from gptoss_local.tui import copying, exporting
from gptoss_local.tui.actions import chat_bindings
from gptoss_local.tui.attachment_bar import AttachmentBar
from gptoss_local.tui.attachment_widgets import AttachmentChips
from gptoss_local.tui.history_errors import reports_history_errors
from gptoss_local.tui.loading import LoadingBanner
from gptoss_local.tui.mention_menu import MentionCompleter, MentionMenu
from gptoss_local.tui.messages import (
    BackendLoaded,
    CompactionReported,
    ContextRefused,
    HistoryFailed,
    ModelChosen,
    ModelLoadFailed,
    ModelLoadStarted,
    ReplyContinued,
    ReplyFailed,
    ReplyFinished,
    ReplyStreamed,
    ToolApprovalAsked,
    ToolCallReported,
    ToolsOpened,
)
from gptoss_local.tui.modals import InstructionsScreen
from gptoss_local.tui.prefill import Prefill
from gptoss_local.tui.reply_flow import ReplyFlow, Report
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
                                    id="loading")  # fmt: skip
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
        if not self.banner.needs_first_run:  # else the app has asked (`ChatApp`)
            self.banner.load()
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
        if not text:
            return
        if self.busy:
            self.notify(_("A reply is still being written: wait, or press Esc to stop it."))
            return
        if self.banner.hold(self._held(text)):  # the model failed to load: it tries again
            return
        attachments = self.attachments.for_message(text)
        if attachments is None:  # refused: the text and the chips stay, to fix and send again
            return
        if not await self.reply.send(text, attachments):
            return  # the box keeps the text, to send again or keep at exit
        self.input.clear()
        self.attachments.clear()
        self.input.remember(text)
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

    @on(ReplyStreamed)
    @on(ReplyContinued)
    @on(ToolCallReported)
    @on(ToolApprovalAsked)
    @on(CompactionReported)
    @on(ContextRefused)
    @on(ReplyFailed)
    async def _reply_reported(self, message: Report) -> None:
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
        if self.reply.cancel():
            return
        if self.state.cancel_edit():
            self.input.clear()
            self.notify(_("Edit cancelled: your message and its reply are kept."), timeout=3)

    @reports_history_errors(N_("Cannot save the effort"))
    def action_cycle_effort(self) -> None:
        """Switch to the next reasoning effort, stored with the chat."""
        effort = self.state.cycle_effort()
        self.show_status()
        self.notify(_("Reasoning effort: {effort}").format(effort=effort_word(effort)), timeout=2)
        self.prefill.warm_up()  # the system message says the effort: the next prompt starts anew

    def action_toggle_reasoning(self) -> None:
        """Open or close the reasoning of every reply."""
        self.chat_log.toggle_reasoning()

    async def action_new_chat(self) -> None:
        """Start an empty chat (created in the history when the first message is sent)."""
        await self.open_chat(None)

    @reports_history_errors(N_("Cannot regenerate the reply"))
    async def action_regenerate(self) -> None:
        """Delete the last reply and write it again."""
        chat_id = self.state.chat_id
        if not self.idle() or chat_id is None:
            return
        dropped = self.state.drop_last_reply()
        if dropped is None:  # an empty chat: nothing to answer
            return
        if dropped:
            await self.render_chat()
        await self.reply.start(chat_id)

    @reports_history_errors(N_("Cannot edit the last message"))
    def action_edit_last(self) -> None:
        """Put the last user message into the input box to edit; sending it replaces the old
        message and what followed, Esc keeps them (nothing is deleted before that)."""
        if not self.idle() or self.state.chat_id is None:
            return
        text = self.state.start_edit()
        if text is not None:
            self.input.begin_edit(text)
            self.notify(_("Editing your last message: Enter sends it in place of the old one "
                          "and its reply; Esc keeps them."), timeout=6)  # fmt: skip

    @reports_history_errors(N_("Cannot read the instructions"))
    def action_edit_instructions(self) -> None:
        """Edit the open chat's instructions; a new chat gets them when it is saved."""
        chat_id = self.state.chat_id
        current = self.state.current_instructions()
        self.app.push_screen(InstructionsScreen(current),
                             lambda text: self._set_instructions(chat_id, text))  # fmt: skip

    @reports_history_errors(N_("Cannot save the instructions"))
    def _set_instructions(self, chat_id: int | None, text: str | None) -> None:
        if text is None:
            return
        self.state.set_instructions(chat_id, text)
        self.notify(_("Instructions saved.") if text else _("Instructions removed."), timeout=2)
        self.prefill.warm_up()  # they are in the developer message, at the start of the prompt

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

    @reports_history_errors(N_("Cannot list the chats"))
    def action_toggle_sidebar(self) -> None:
        """Show or hide the list of saved chats."""
        if not self.sidebar.toggle(self.state.chat_id):
            self.input.focus()

    @reports_history_errors(N_("Cannot list the chats"))
    def action_search_chats(self) -> None:
        """Open the sidebar with the focus in its search box."""
        self.sidebar.open_search(self.state.chat_id)

    def action_rename_chat(self) -> None:
        """Ask for a new title of the open chat."""
        if self.state.chat_id is not None:
            self.sidebar.rename(self.state.chat_id)

    def action_delete_chat(self) -> None:
        """Delete the open chat after asking."""
        if self.state.chat_id is not None and self.idle():
            self.sidebar.delete(self.state.chat_id)

    @reports_history_errors(N_("Cannot export the chat"))
    def action_export_chat(self) -> None:
        """Export the open chat as Markdown, asking for the file (offered in the folder the app
        was started from); a new chat has nothing to export."""
        exporting.export_chat(self, self.history, self.state.chat_id)

    @reports_history_errors(N_("Cannot open the chat"))
    async def open_chat(self, chat_id: int | None) -> None:
        """Show the chat `chat_id` (None: a new one) in the log."""
        if not self.idle():
            return
        self.state.switch(chat_id)
        await self.render_chat()
        self.sidebar.list_chats(chat_id)
        self.input.focus()

    @on(Sidebar.ChatChosen)
    async def _chat_chosen(self, message: Sidebar.ChatChosen) -> None:
        await self.open_chat(message.chat_id)

    @on(Sidebar.ChatRenamed)
    def _chat_renamed(self, message: Sidebar.ChatRenamed) -> None:
        self.sub_title = message.title

    @on(Sidebar.ChatDeleted)
    async def _chat_deleted(self, _message: Sidebar.ChatDeleted) -> None:
        await self.open_chat(None)
        self.notify(_("Chat deleted."), timeout=2)

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
        if not self.banner.can_choose_again:
            self.notify(_("This chat's model was given to it: there is nothing to choose here."))
        elif self.idle():
            self.banner.choose_again()

    @on(ModelChosen)
    def _model_chosen(self, message: ModelChosen) -> None:
        self.generation = message.generation
        if message.switched:  # the model the prefill was for is going
            self.prefill.stop()
            self.status.info = None
        elif self.state.chat_id is None:  # a new chat takes the effort just chosen
            self.state.effort = message.generation.effort
            self.show_status()

    @on(ModelLoadStarted)
    @on(ModelLoadFailed)
    def _loading(self, message: ModelLoadStarted | ModelLoadFailed) -> None:
        """The status bar says so instead of the model's name (the banner shows the rest)."""
        if not self.status.is_attached:  # the app is closing: the widgets are already gone
            return
        if isinstance(message, ModelLoadStarted):
            self.status.waiting = _("loading {model}…").format(model=message.model)
        else:
            self.status.waiting = _("the model is not loaded")

    @on(BackendLoaded)
    def model_loaded(self, message: BackendLoaded) -> None:
        """The model is ready: show it, prefill, and send the message held for it if the chat,
        the edit and the text in the box are still what they were."""
        if not self.status.is_attached:  # loaded while the app was closing
            return
        self.status.info, self.status.waiting = message.info, ""
        self.prefill.warm_up()
        held = self.host.take_held()
        if held is None:
            return
        if held == self._held(self.input.text.strip()):
            self.post_message(ChatInput.Submitted(held.text))
        else:  # the user moved on meanwhile: their chat and their box stay as they are
            self.notify(_("The model is ready. The held message was not sent, as the chat or "
                          "the text changed: press Enter to send what is in the box."),
                        markup=False)  # fmt: skip

    def _held(self, text: str) -> Held:
        """`text` as a message held for the model: for the open chat and edit."""
        return Held(self.state.chat_id, self.state.editing, text)
