"""The chat screen: the log of messages, the input, the status bar, and one reply at a time.

The engine runs in a thread worker (`pump.run_reply`) and talks to the screen only by posting
messages; the UI thread owns every widget. Stopping sets a `threading.Event` the backend checks
between tokens, so the partial reply is kept and saved as "stopped". The input box is emptied
only once a message is saved and its reply started: if the history fails, the text stays there.

The services are plain objects (`gptoss_local.chat`): which chat is open (`ChatState`), the
model (`ModelHost`) and the prefill while the user types (`PrefillWarmer`); their threads are
this screen's workers, and they report back through messages to it. The status bar reads live
VRAM itself. The actions on saved chats, copying and the model's set-up are functions in
`saved_chats`, `copying` and `model_setup`, bound here as the screen's actions.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.screen import Screen
from textual.widgets import Footer, Header

from gptoss_local.backends.base import Conversation, GenerationSettings
from gptoss_local.chat.chat_state import ChatState
from gptoss_local.chat.model_host import ModelHost, Opener
from gptoss_local.chat.tool_host import ChatTools, ToolHost
from gptoss_local.chat.warmer import PrefillWarmer
from gptoss_local.hardware.vram import VramMonitor
from gptoss_local.session.errors import HistoryError
from gptoss_local.session.history import History
from gptoss_local.setup.first_run import Setup
from gptoss_local.tools import HistoryRecorder, ToolLoop
from gptoss_local.tui import copying, model_setup, saved_chats, tool_steps
from gptoss_local.tui.actions import chat_bindings
from gptoss_local.tui.approval import ApprovalScreen, asker
from gptoss_local.tui.loading import LoadingBanner
from gptoss_local.tui.messages import (
    BackendLoaded,
    HistoryFailed,
    LoadProgressed,
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
from gptoss_local.tui.pump import run_reply, with_effort
from gptoss_local.tui.saved_chats import reports_history_errors
from gptoss_local.tui.sidebar import ChatList, Sidebar
from gptoss_local.tui.status import StatusBar
from gptoss_local.tui.tool_views import ToolCallView
from gptoss_local.tui.widgets import ChatInput, ChatLog, ReplyView, UserMessage


class ChatScreen(Screen[None]):
    """The chat, with its bindings (`actions.ACTIONS`) and the services it drives.

    Args:
        history: The open chat history (shared with the worker threads).
        state: Which chat is open, and its effort.
        generation: Sampling settings; the effort in them is replaced by the chat's.
        opener: Makes the backend on a worker; None until the first-run screen gives one.
        setup: Asks the first-run questions (and again on F9); None with a fixed opener.
        model_name: What the loading banner calls the model.
        vram: Reads VRAM use for the status bar; None shows none.
        warnings: What the plan warned about, shown once when the chat opens.
        tools: The tools the model may call (default: none).
    """

    BINDINGS: ClassVar[list[BindingType]] = chat_bindings()

    def __init__(
        self,
        history: History,
        state: ChatState,
        generation: GenerationSettings,
        opener: Opener | None,
        *,
        setup: Setup | None = None,
        model_name: str = "the model",
        vram: VramMonitor | None = None,
        warnings: tuple[str, ...] = (),
        tools: ChatTools | None = None,
    ) -> None:
        super().__init__()
        self.history, self.state, self.generation, self.setup = history, state, generation, setup
        self.show_reasoning = False
        self.history_error: HistoryError | None = None  # see `history_failed`
        self.warnings = warnings
        self.input = ChatInput(id="input", soft_wrap=True, show_line_numbers=False)
        self.banner = LoadingBanner(id="loading")
        self.host = ModelHost(opener, model_name, model_setup.reports(self))
        self.warmer = PrefillWarmer(self._warm_in_worker)
        self.tools = ToolHost(tools or ChatTools(), self._tools_in_worker)
        self.tools_ready = False  # set when the screen has heard so (`ToolsOpened`)
        self.status = StatusBar(state.effort, vram)
        self._cancel: threading.Event | None = None  # of the reply being written
        self._reply: ReplyView | None = None  # of the model turn being written
        self.pending_calls: list[ToolCallView] = []  # of this reply, not finished yet
        self.asking: ApprovalScreen | None = None  # the dialog a reply waits on
        self._sent: list[str] = []  # the messages sent in this session, for input history

    @property
    def live_reply(self) -> ReplyView | None:
        """The view of the model turn being written, if a reply is."""
        return self._reply

    @property
    def busy(self) -> bool:
        """Whether a reply is being written."""
        return self._reply is not None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Sidebar(self.history, id="sidebar")
        yield self.banner
        yield ChatLog(id="log")
        yield self.input
        yield self.status
        yield Footer()

    async def on_mount(self) -> None:
        self.query_one(ChatLog).anchor()
        await self.render_chat()
        self.input.focus()
        self.tools.open(lambda problems: self.post_message(ToolsOpened(problems)))
        if not model_setup.needs_first_run(self):  # else the app has asked (`ChatApp`)
            model_setup.load(self)
        model_setup.show_plan_warnings(self)

    def _warm_in_worker(self, prefill: Callable[[], None]) -> None:
        self.run_worker(prefill, thread=True, group="warm", exit_on_error=False)

    def _tools_in_worker(self, build: Callable[[], None]) -> None:
        self.run_worker(build, thread=True, group="tools", exit_on_error=False)

    # --- sending and streaming -----------------------------------------------------------------

    @on(ChatInput.Submitted)
    async def _send(self, message: ChatInput.Submitted) -> None:
        text = message.text.strip()
        if not text:
            return
        if self.busy:
            self.notify("A reply is still being written: wait, or press Esc to stop it.")
            return
        if model_setup.hold_until_loaded(self, text):
            return
        try:
            if self.state.drop_edited():  # the old message and what followed go now
                await self.render_chat()
            chat_id = self.state.add_user_message(text, self.status.info)
            await self.query_one(ChatLog).mount(UserMessage(text))
            self.show_status()  # the chat's title comes from its first message
            if self.query_one(Sidebar).display:
                self.refresh_sidebar()  # a new chat, or this one moved to the top
        except HistoryError as exc:  # the text stays in the box, to send again or keep at exit
            self.history_failed(exc, "Cannot save the message")
            return
        if not await self.start_reply(chat_id):
            return  # saved, but the history failed: the box keeps the text all the same
        self.input.clear()
        self.input.remember(text)
        self._sent.append(text)

    async def start_reply(self, chat_id: int) -> bool:
        """Start the reply worker; False when the history failed (shown and remembered)."""
        self.warmer.stop()  # the reply's worker waits for the backend until it has stopped
        try:
            conversation, reply_id = self.state.begin_reply(chat_id)
        except HistoryError as exc:
            self.history_failed(exc, "Cannot start the reply")
            return False
        await self.new_turn()
        self._cancel = cancel = threading.Event()
        settings = with_effort(self.generation, self.state.effort)
        recorder = HistoryRecorder(self.history, chat_id, reply_id, effort=self.state.effort)

        def loop() -> ToolLoop:  # on the worker: waits for the model and the tools
            backend = self.host.get()
            registry = self.tools.for_chat(chat_id, cancel)
            approvals = self.tools.approvals(chat_id, asker(self.post_message, cancel))
            return ToolLoop(backend, registry, approvals, max_calls=self.tools.tools.max_calls)

        self._generate(loop, recorder, conversation, settings, cancel)
        return True

    async def new_turn(self) -> None:
        """Show a new live reply view: the reply's first model turn, or the next after calls."""
        if self._reply is not None:
            await self._reply.finish()
        self._reply = ReplyView(live=True, keep_open=self.show_reasoning)
        await self.query_one(ChatLog).mount(self._reply)

    @work(thread=True, group="reply", exit_on_error=False)
    def _generate(
        self,
        loop: Callable[[], ToolLoop],
        recorder: HistoryRecorder,
        conversation: Conversation,
        settings: GenerationSettings,
        cancel: threading.Event,
    ) -> None:
        run_reply(loop, recorder, conversation, settings, cancel, self.post_message)

    @on(ReplyStreamed)
    async def _streamed(self, message: ReplyStreamed) -> None:
        if self._reply is not None:
            await self._reply.add(message.reasoning, message.answer)

    @on(ReplyContinued)
    async def _continued(self, _message: ReplyContinued) -> None:
        await self.new_turn()

    @on(ToolCallReported)
    async def _tool_step(self, message: ToolCallReported) -> None:
        await tool_steps.show_step(self, message.step)

    @on(ToolApprovalAsked)
    def _approval_asked(self, message: ToolApprovalAsked) -> None:
        tool_steps.ask_approval(self, message)

    @on(ToolsOpened)
    def _tools_opened(self, message: ToolsOpened) -> None:
        for problem in message.problems:
            self.notify(problem, title="A tool is not available", severity="warning",
                        timeout=15, markup=False)  # fmt: skip
        self.tools_ready = True
        self.warm_up()

    @on(ReplyFinished)
    async def reply_finished(self, message: ReplyFinished) -> None:
        """Show how the reply ended and its figures; prefill for the next message."""
        note = "stopped" if message.stopped else tool_steps.ENDED.get(message.ended, "")
        await self._end_reply(note)
        if not self.status.is_attached:  # stopped by quitting: the widgets are already gone
            return
        self.status.stats = message.stats
        if message.stats is not None and message.stats.stop_reason == "context_full":
            self.notify("The context is full: start a new chat (Ctrl+N).", severity="warning")
        self.warm_up()

    @on(ReplyFailed)
    async def _failed(self, message: ReplyFailed) -> None:
        await self._end_reply(f"failed: {message.error}")
        if message.history_error is not None:
            self.history_failed(message.history_error, "Cannot save the reply")
        else:
            self.notify(message.error, title="The model failed", severity="error", timeout=10,
                        markup=False)  # fmt: skip
        self.warm_up()

    async def _end_reply(self, note: str) -> None:
        tool_steps.end_calls(self)
        reply, self._reply, self._cancel = self._reply, None, None
        if reply is not None:
            await reply.finish(note)

    def stop(self) -> bool:
        """Stop the reply being written (it is saved as stopped) and the prefill, as the app
        quits; whether a reply was being written."""
        busy = self.busy
        if self._cancel is not None:
            self._cancel.set()
        self.warmer.stop()
        return busy

    def close_model(self) -> None:
        """Free the model (after the app has exited): a load still running is told to stop, and
        so is a reply (an exit that did not go through Quit may leave one running)."""
        self.stop()
        self.host.close()
        self.tools.close()

    # --- the chat's own actions ----------------------------------------------------------------

    def action_stop(self) -> None:
        """Stop the reply being written (saved as stopped), or cancel an edit (Ctrl+L)."""
        if self._cancel is not None:
            self._cancel.set()
        elif self.state.cancel_edit():
            self.input.clear()
            self.notify("Edit cancelled: your message and its reply are kept.", timeout=3)

    @reports_history_errors("Cannot save the effort")
    def action_cycle_effort(self) -> None:
        """Switch to the next reasoning effort, stored with the chat."""
        effort = self.state.cycle_effort()
        self.show_status()
        self.notify(f"Reasoning effort: {effort}", timeout=2)
        self.warm_up()  # the system message says the effort: the next prompt starts anew

    def action_toggle_reasoning(self) -> None:
        """Open or close the reasoning of every reply."""
        self.show_reasoning = not self.show_reasoning
        for view in self.query(ReplyView):
            view.keep_open = self.show_reasoning  # also for a reply still thinking
            if view.reasoning_text:
                view.reasoning_box.collapsed = not self.show_reasoning

    async def action_new_chat(self) -> None:
        """Start an empty chat (created in the history when the first message is sent)."""
        await self.open_chat(None)

    # The other actions live with what they act on; each takes the screen as its first argument,
    # so it is bound here as a method of the screen (the bindings name them `action_*`).
    action_regenerate = saved_chats.regenerate
    action_edit_last = saved_chats.edit_last
    open_chat = saved_chats.open_chat
    action_edit_instructions = saved_chats.edit_instructions
    action_rename_chat = saved_chats.rename
    action_delete_chat = saved_chats.delete
    action_toggle_sidebar = saved_chats.toggle_sidebar
    action_search_chats = saved_chats.search
    refresh_sidebar = saved_chats.refresh_sidebar
    action_choose_model = model_setup.choose_again
    action_copy_message = copying.copy_message
    action_copy_code = copying.copy_code
    action_focus_message = copying.focus_message

    @on(ChatList.OptionSelected, "#chats")
    async def _chat_picked(self, event: ChatList.OptionSelected) -> None:
        await self.open_chat(ChatList.chat_id(event.option))

    # --- what the screen shows -----------------------------------------------------------------

    async def render_chat(self) -> None:
        """Show the open chat: its messages, its effort and its last reply's figures."""
        messages = self.state.messages()
        await self.query_one(ChatLog).show(messages, self.show_reasoning)
        # Up recalls this chat's messages; in a new chat, those sent earlier in this session.
        past = [m.content for m in messages if m.role == "user"]
        self.input.set_past(past if self.state.chat_id is not None else self._sent)
        self.state.load_effort()
        # The figures of this chat's last reply (none in a new chat), not of the chat before.
        replies = [m.stats for m in messages if m.role == "assistant" and m.stats is not None]
        self.status.stats = replies[-1] if replies else None
        self.show_status()
        self.warm_up()

    def show_status(self) -> None:
        """The chat's title in the header, its effort in the status bar."""
        self.sub_title = self.state.title() or "new chat"
        self.status.effort = self.state.effort

    def warm_up(self) -> None:
        """Prefill the open chat's next prompt on a worker; only with a loaded model and no
        reply running (it never triggers a load)."""
        backend = self.host.backend
        if backend is None or self.busy or not self.tools_ready:  # both come back here
            return
        try:  # the tools as the reply will offer them, so that the prefix matches
            registry = self.tools.for_chat(self.state.chat_id)
            conversation = registry.offer(self.state.next_conversation())
        except HistoryError:  # the reply will say what is wrong with the history
            self.warmer.stop()
            return
        self.warmer.start(backend, conversation, with_effort(self.generation, self.state.effort))

    def idle(self) -> bool:
        """Whether no reply is being written; if one is, the user is told to wait."""
        if self.busy:
            self.notify("A reply is being written: wait, or press Esc to stop it.")
        return not self.busy

    @on(HistoryFailed)
    def _history_failed(self, message: HistoryFailed) -> None:
        self.history_failed(message.error, message.title)

    def history_failed(self, error: HistoryError, title: str) -> None:
        """Show a failure of the history and remember it: `gptoss-local chat` says it again at
        exit (exit code 2) and saves what is left in the input box."""
        self.history_error = error
        self.notify(str(error), title=title, severity="error", timeout=30, markup=False)

    @on(ModelLoadStarted)
    @on(LoadProgressed)
    @on(ModelLoadFailed)
    def _loading(self, message: ModelLoadStarted | LoadProgressed | ModelLoadFailed) -> None:
        model_setup.show_loading(self, message)

    @on(BackendLoaded)
    def model_loaded(self, message: BackendLoaded) -> None:
        """The model is ready: show it, prefill, send a message held for it."""
        model_setup.loaded(self, message.info)
