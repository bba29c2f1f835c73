"""The chat app: a log of messages, the input, the status bar, and one reply worker at a time.

The engine runs in a thread worker (`pump.run_reply`) and talks to the UI only by posting
messages; the UI thread owns every widget. Stopping sets a `threading.Event` the backend checks
between tokens, so the partial reply is kept and saved as "stopped". The input box is emptied
only once a message is saved and its reply started: if the history fails, the text stays there.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterable
from functools import partial
from typing import ClassVar

from textual import on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import BindingType
from textual.screen import Screen
from textual.widgets import Footer, Header

from gptoss_local.backends.base import Backend, Conversation, GenerationSettings
from gptoss_local.hardware.vram import VramMonitor
from gptoss_local.kinds import EFFORTS
from gptoss_local.session.errors import HistoryError
from gptoss_local.session.history import History
from gptoss_local.setup.first_run import Opener, Ready, Setup
from gptoss_local.tui.actions import ACTIONS, bindings
from gptoss_local.tui.chat_actions import ChatActions, reports_history_errors
from gptoss_local.tui.copying import CopyActions
from gptoss_local.tui.live_vram import LiveVram
from gptoss_local.tui.loading import LoadingBanner
from gptoss_local.tui.messages import ReplyFailed, ReplyFinished, ReplyStreamed
from gptoss_local.tui.model_loading import Held, ModelLoading
from gptoss_local.tui.pump import favour_the_engine_thread, run_reply, with_effort
from gptoss_local.tui.quitting import QuitKeys
from gptoss_local.tui.sidebar import Sidebar
from gptoss_local.tui.status import StatusBar
from gptoss_local.tui.warming import Warming
from gptoss_local.tui.widgets import ChatInput, ChatLog, ReplyView, UserMessage


class ChatApp(ChatActions, CopyActions, LiveVram, ModelLoading, QuitKeys, Warming, App[None]):
    """The gptoss-local chat. Build it with `make_app`."""

    CSS_PATH = "app.tcss"
    TITLE = "gptoss-local"
    BINDINGS: ClassVar[list[BindingType]] = bindings()

    def __init__(
        self,
        history: History,
        backend_factory: Opener | None,
        generation: GenerationSettings,
        effort: str,
        chat_id: int | None,
        setup: Setup | None = None,
        model_name: str = "the model",
    ) -> None:
        super().__init__()
        self.history = history
        self.generation = generation
        self.effort = effort
        self.chat_id = chat_id
        self.show_reasoning = False
        self.instructions = ""  # of a new chat, until its first message saves it
        self.model_name = model_name
        self._factory = backend_factory
        self._setup = setup
        self._backend: Backend | None = None
        self._backend_lock = threading.Lock()
        self._quitting = threading.Event()
        self._load_failed = False
        self._send_after_load: Held | None = None
        self._warm_cancel: threading.Event | None = None
        self._switch_interval = sys.getswitchinterval()
        self._cancel: threading.Event | None = None
        self._reply: ReplyView | None = None
        self._sent: list[str] = []  # the messages sent in this session, for input history
        self.history_error: HistoryError | None = None  # see `ChatActions.history_failed`
        self._input = ChatInput(id="input", soft_wrap=True, show_line_numbers=False)

    @property
    def busy(self) -> bool:
        """Whether a reply is being written."""
        return self._reply is not None

    def unsent_text(self) -> str:
        """What is in the input box (also after the app has exited)."""
        return self._input.text

    def compose(self) -> ComposeResult:
        yield Header()
        yield Sidebar(id="sidebar")
        yield LoadingBanner(id="loading")
        yield ChatLog(id="log")
        yield self._input
        yield StatusBar(self.effort)
        yield Footer()

    async def on_mount(self) -> None:
        self._switch_interval = favour_the_engine_thread()
        self.query_one(ChatLog).anchor()
        await self._render_chat()
        self.query_one(ChatInput).focus()
        self.start_vram()
        self.start_model()

    def on_unmount(self) -> None:
        sys.setswitchinterval(self._switch_interval)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for ident, _key, action, label, help_text in ACTIONS:
            if ident != "quit":  # Textual's own list already has Quit
                yield SystemCommand(label, help_text, partial(self.run_action, action))

    # --- sending and streaming -----------------------------------------------------------------

    @on(ChatInput.Submitted)
    async def _send(self, message: ChatInput.Submitted) -> None:
        text = message.text.strip()
        if not text:
            return
        if self.busy:
            self.notify("A reply is still being written: wait, or press Esc to stop it.")
            return
        if self.hold_until_loaded(text):
            return
        try:
            await self.replace_edited()
            if self.chat_id is None:
                info = self.query_one(StatusBar).info
                self.chat_id = self.history.create_chat(
                    effort=self.effort,
                    instructions=self.instructions or None,
                    model=info.model if info else None,
                    backend=info.backend if info else None,
                ).id
                self.instructions = ""  # the chat keeps them now
            self.history.add_user_message(self.chat_id, text)
            await self.query_one(ChatLog).mount(UserMessage(text))
            self._show_status()  # the chat's title comes from its first message
            if self.query_one(Sidebar).display:
                self.refresh_sidebar()  # a new chat, or this one moved to the top
        except HistoryError as exc:  # the text stays in the box, to send again or keep at exit
            self.history_failed(exc, "Cannot save the message")
            return
        if not await self._start_reply(self.chat_id):
            return  # saved, but the history failed: the box keeps the text all the same
        box = self.query_one(ChatInput)
        box.clear()
        box.remember(text)
        self._sent.append(text)

    async def _start_reply(self, chat_id: int) -> bool:
        """Start the reply worker; False when the history failed (shown and remembered)."""
        self.stop_warming()  # the reply's worker waits for the backend until it has stopped
        try:
            conversation = self.history.to_conversation(chat_id)
            reply_id = self.history.begin_assistant_message(chat_id, effort=self.effort).id
        except HistoryError as exc:
            self.history_failed(exc, "Cannot start the reply")
            return False
        self._reply = ReplyView(live=True, keep_open=self.show_reasoning)
        await self.query_one(ChatLog).mount(self._reply)
        self._cancel = threading.Event()
        settings = with_effort(self.generation, self.effort)
        self._generate(reply_id, conversation, settings, self._cancel)
        return True

    @work(thread=True, group="reply", exit_on_error=False)
    def _generate(
        self,
        reply_id: int,
        conversation: Conversation,
        settings: GenerationSettings,
        cancel: threading.Event,
    ) -> None:
        post = self.post_message
        run_reply(self.backend, self.history, reply_id, conversation, settings, cancel, post)

    async def on_reply_streamed(self, message: ReplyStreamed) -> None:
        if self._reply is not None:
            await self._reply.add(message.reasoning, message.answer)

    async def on_reply_finished(self, message: ReplyFinished) -> None:
        await self._end_reply("stopped" if message.stopped else "")
        bars = self.query(StatusBar)
        if not bars:  # the reply was stopped by quitting: the screen is already gone
            return
        status = bars.first()
        status.stats = message.stats
        status.refresh_text()
        if message.stats is not None and message.stats.stop_reason == "context_full":
            self.notify("The context is full: start a new chat (Ctrl+N).", severity="warning")
        self.warm_up()

    async def on_reply_failed(self, message: ReplyFailed) -> None:
        await self._end_reply(f"failed: {message.error}")
        if message.history_error is not None:
            self.history_failed(message.history_error, "Cannot save the reply")
        else:
            self.notify(message.error, title="The model failed", severity="error", timeout=10,
                        markup=False)  # fmt: skip
        self.warm_up()

    async def _end_reply(self, note: str) -> None:
        reply, self._reply, self._cancel = self._reply, None, None
        if reply is not None:
            await reply.finish(note)

    # --- actions -------------------------------------------------------------------------------

    def action_stop(self) -> None:
        """Stop the reply being written (saved as stopped), or cancel an edit (Ctrl+L)."""
        if self._cancel is not None:
            self._cancel.set()
        else:
            self.cancel_edit()

    async def action_quit(self) -> None:
        """Stop any reply (so the worker thread ends) and quit."""
        self.action_stop()
        self.stop_warming()
        self.exit()

    @reports_history_errors("Cannot save the effort")
    def action_cycle_effort(self) -> None:
        """Switch to the next reasoning effort, stored with the chat."""
        self.effort = EFFORTS[(EFFORTS.index(self.effort) + 1) % len(EFFORTS)]
        if self.chat_id is not None:
            self.history.set_effort(self.chat_id, self.effort)
        self._show_status()
        self.notify(f"Reasoning effort: {self.effort}", timeout=2)
        self.warm_up()  # the system message says the effort: the next prompt starts anew

    def action_toggle_reasoning(self) -> None:
        """Open or close the reasoning of every reply."""
        self.show_reasoning = not self.show_reasoning
        for view in self.query(ReplyView):
            view.keep_open = self.show_reasoning  # also for a reply still thinking
            if view.reasoning_text:
                view.reasoning_box.collapsed = not self.show_reasoning

    # --- helpers -------------------------------------------------------------------------------

    async def _render_chat(self) -> None:
        messages = [] if self.chat_id is None else self.history.messages(self.chat_id)
        await self.query_one(ChatLog).show(messages, self.show_reasoning)
        # Up recalls this chat's messages; in a new chat, those sent earlier in this session.
        past = [m.content for m in messages if m.role == "user"]
        self.query_one(ChatInput).set_past(past if self.chat_id is not None else self._sent)
        if self.chat_id is not None:
            self.effort = self.history.get_chat(self.chat_id).effort
        # The figures of this chat's last reply (none in a new chat), not of the chat before.
        replies = [m.stats for m in messages if m.role == "assistant" and m.stats is not None]
        self.query_one(StatusBar).stats = replies[-1] if replies else None
        self._show_status()
        self.warm_up()

    def _show_status(self) -> None:
        title = self.history.get_chat(self.chat_id).title if self.chat_id is not None else ""
        self.sub_title = title or "new chat"
        status = self.query_one(StatusBar)
        status.effort = self.effort
        status.refresh_text()


def make_app(
    history: History,
    backend_factory: Opener | None = None,
    generation: GenerationSettings | None = None,
    *,
    effort: str | None = None,
    chat_id: int | None = None,
    ready: Ready | None = None,
    setup: Setup | None = None,
    vram: VramMonitor | None = None,
) -> ChatApp:
    """Build the chat app from its services.

    Args:
        history: The open chat history (shared with the worker thread).
        backend_factory: Makes the backend on first use, on a worker thread; it is given a
            progress callback (`LoadProgress`) it may call while loading.
        generation: Sampling settings; the effort in it is replaced by the chat's.
        effort: The effort of a new chat (default: the one in `generation`).
        chat_id: A saved chat to open; None starts a new one.
        ready: What `first_run.Setup.ready` settled: factory, generation and model name
            (instead of `backend_factory` and `generation`).
        setup: Open on the first-run screen, which gives the factory when the user starts.
        vram: Reads VRAM use for the status bar (default: NVML's, when a GPU answers).
    """
    name = "the model"
    if ready is not None:
        backend_factory, generation, name = ready.open, ready.generation, ready.model
    generation = generation or GenerationSettings()
    app = ChatApp(history, backend_factory, generation, effort or generation.effort, chat_id,
                  setup, name)  # fmt: skip
    app.vram = vram if vram is not None else VramMonitor()
    if ready is not None and ready.warnings:
        app.call_later(app.show_plan_warnings, ready.warnings)
    return app
