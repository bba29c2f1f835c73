"""The life of one reply on the chat screen: the message saved and shown, the reply written on a
thread worker (`pump.run_reply`, through the tool loop), its tool calls and their approval, the
chat compacted on the way, and how it ended.

The worker talks to the screen only by posting messages to it; the screen hands each one to
`ReplyFlow.hear` in the order it came (one queue: the screen's), so the log shows them in order.
Stopping sets a `threading.Event` the backend checks between tokens, so the partial reply is kept
and saved as "stopped". What the flow needs of the screen is `ReplyScreen`.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from textual.message import Message
from textual.notifications import SeverityLevel

from gptoss_local.attachments import AttachedFile
from gptoss_local.backends.base import GenerationSettings
from gptoss_local.chat.context_keeper import Compacting, ContextKeeper
from gptoss_local.chat.model_host import ModelHost
from gptoss_local.chat.next_reply import NextReply
from gptoss_local.chat.services import ChatServices
from gptoss_local.chat.tool_host import ToolHost
from gptoss_local.i18n import _
from gptoss_local.session.errors import HistoryError
from gptoss_local.session.records import Compaction, StoredMessage
from gptoss_local.tools import HistoryRecorder, ToolLoop
from gptoss_local.tui.approval import asker
from gptoss_local.tui.attachment_widgets import AttachmentList
from gptoss_local.tui.compaction_view import marker_title
from gptoss_local.tui.messages import (
    CompactionReported,
    ContextRefused,
    EngineWaiting,
    ReplyContinued,
    ReplyFailed,
    ReplyFinished,
    ReplyReport,
    ReplyStreamed,
    ToolApprovalAsked,
    ToolCallReported,
)
from gptoss_local.tui.prefill import Prefill
from gptoss_local.tui.pump import run_reply
from gptoss_local.tui.reply_view import end_note
from gptoss_local.tui.sidebar import Sidebar
from gptoss_local.tui.status import StatusBar
from gptoss_local.tui.widgets import ChatLog, UserMessage


class ReplyScreen(Protocol):
    """What a reply needs of the chat screen it is written on."""

    chat_log: ChatLog
    status: StatusBar
    sidebar: Sidebar
    host: ModelHost
    tools: ToolHost
    prefill: Prefill
    generation: GenerationSettings  # the model's, as it is now (F9 may change it)

    def post_message(self, message: Message) -> bool: ...

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = True) -> None: ...  # fmt: skip

    async def render_chat(self) -> None: ...

    def show_status(self) -> None: ...

    def history_failed(self, error: HistoryError, title: str) -> None: ...

    def take_back(self, sent: StoredMessage) -> None: ...


class ReplyFlow:
    """One reply at a time, from the message sent to the note it ends with.

    Args:
        screen: The chat screen the reply is written on.
        services: The chat's services (the history, the open chat, the context policy).
        in_worker: Runs the reply on a thread worker of the screen.
    """

    def __init__(
        self,
        screen: ReplyScreen,
        services: ChatServices,
        in_worker: Callable[[Callable[[], None]], None],
    ) -> None:
        self.screen, self.services, self._in_worker = screen, services, in_worker
        self._cancel: threading.Event | None = None  # of the reply being written
        self._heard: dict[type[ReplyReport], Callable[[Any], Awaitable[None]]] = {
            ReplyStreamed: self._streamed, ReplyContinued: self._continued,
            ToolCallReported: self._tool_step, ToolApprovalAsked: self._approval_asked,
            CompactionReported: self._compaction, ContextRefused: self._refused,
            ReplyFailed: self._failed, EngineWaiting: self._waiting,
        }  # fmt: skip

    @property
    def busy(self) -> bool:
        """Whether a reply is being written."""
        return self.screen.chat_log.live is not None

    async def send(self, text: str, attachments: tuple[AttachedFile, ...]) -> bool:
        """Save `text` (with `attachments`) as the open chat's next message, show it and start
        its reply; False when the history failed (shown and remembered; the box keeps the text)."""
        try:
            chat_id = await self._save(text, attachments)
        except HistoryError as exc:
            self.screen.history_failed(exc, _("Cannot save the message"))
            return False
        return await self.start(chat_id)

    async def _save(self, text: str, attachments: tuple[AttachedFile, ...]) -> int:
        screen, state = self.screen, self.services.state
        if state.drop_edited():  # the old message and what followed go now
            await screen.render_chat()
        chat_id = state.add_user_message(text, screen.status.info, attachments)
        sent = state.sent
        await screen.chat_log.mount(UserMessage(text, sent.seq if sent else None))
        if attachments:
            await screen.chat_log.mount(AttachmentList(attachments))
        screen.show_status()  # the chat's title comes from its first message
        if screen.sidebar.display:
            screen.sidebar.list_chats(chat_id)  # a new chat, or this one moved to the top
        return chat_id

    async def start(self, chat_id: int) -> bool:
        """Start the reply worker; False when the history failed (shown and remembered)."""
        screen, services = self.screen, self.services
        screen.prefill.stop()  # the reply's worker waits for the backend until it has stopped
        try:
            conversation, reply_id = services.state.begin_reply(chat_id)
        except HistoryError as exc:
            screen.history_failed(exc, _("Cannot start the reply"))
            return False
        await screen.chat_log.new_turn()
        self._cancel = cancel = threading.Event()
        effort = services.state.effort
        reply = NextReply(conversation, screen.generation, effort)  # made as its prefill's
        recorder = HistoryRecorder(services.history, chat_id, reply_id, effort=effort)
        keeper = ContextKeeper(services.history, chat_id, services.context_policy, self._report)
        loop = self._loop_for(chat_id, cancel)
        self._in_worker(
            lambda: run_reply(loop, recorder, reply, cancel, screen.post_message, keeper)
        )
        return True

    def _loop_for(self, chat_id: int, cancel: threading.Event) -> Callable[[], ToolLoop]:
        host, tools, post = self.screen.host, self.screen.tools, self.screen.post_message

        def loop() -> ToolLoop:  # on the worker: waits for the model and the tools
            backend = host.get()
            registry = tools.for_chat(chat_id, cancel)
            approvals = tools.approvals(chat_id, asker(post, cancel))
            return ToolLoop(backend, registry, approvals, max_calls=tools.tools.max_calls)

        return loop

    def _report(self, event: Compacting | Compaction) -> None:  # on the reply's worker
        self.screen.post_message(CompactionReported(event))

    def cancel(self) -> bool:
        """Stop the reply being written (it is saved as stopped); whether there was one."""
        if self._cancel is None:
            return False
        self._cancel.set()
        return True

    async def hear(self, message: ReplyReport) -> None:
        """Show what the worker reported."""
        await self._heard[type(message)](message)

    async def _waiting(self, message: EngineWaiting) -> None:
        """The shared engine answers another program first: the bar says for whom."""
        who = message.client
        self.screen.status.note = _("waiting for {client}").format(client=who) if who else ""

    async def _streamed(self, message: ReplyStreamed) -> None:
        await self.screen.chat_log.add(message.reasoning, message.answer)

    async def _continued(self, _message: ReplyContinued) -> None:
        await self.screen.chat_log.new_turn()

    async def _tool_step(self, message: ToolCallReported) -> None:
        await self.screen.chat_log.show_step(message.step)

    async def _approval_asked(self, message: ToolApprovalAsked) -> None:
        self.screen.chat_log.ask(message)

    async def _compaction(self, message: CompactionReported) -> None:
        if isinstance(message.event, Compacting):
            await self.screen.chat_log.show_compacting(message.event.messages)
            return
        await self.screen.chat_log.show_compaction(message.event)
        self.screen.notify(marker_title(message.event), title=_("The chat was compacted"),
                           timeout=8, markup=False)  # fmt: skip

    async def _refused(self, message: ContextRefused) -> None:
        """The message did not fit: it leaves the chat and goes back to the input box."""
        screen = self.screen
        self._cancel = None
        await screen.chat_log.drop_live()
        try:
            sent = self.services.state.take_back_sent()
            await screen.render_chat()
        except HistoryError as exc:
            screen.history_failed(exc, _("Cannot take back the message"))
            return
        if sent is not None:
            screen.take_back(sent)
        hint = _("Load the model with a larger context (F9), attach less, or start a new chat "
                 "(Ctrl+N).")  # fmt: skip
        screen.notify(f"{message.error}\n{hint}", title=_("The message was not sent"),
                      severity="error", timeout=20, markup=False)  # fmt: skip
        screen.prefill.warm_up()

    async def finished(self, message: ReplyFinished) -> None:
        """Show how the reply ended and its figures; prefill for the next message."""
        screen = self.screen
        self._cancel = None
        note = end_note(message.stopped, message.ended, message.stats)
        await screen.chat_log.end_reply(note, message.citations)
        if not screen.status.is_attached:  # stopped by quitting: the widgets are already gone
            return
        screen.status.stats = message.stats
        if message.stats is not None and message.stats.stop_reason == "context_full":
            screen.notify(_("The context is full: F9 chooses a larger context, Ctrl+N starts a "
                            "new chat."), severity="warning")  # fmt: skip
        screen.prefill.warm_up()

    async def _failed(self, message: ReplyFailed) -> None:
        screen = self.screen
        self._cancel = None
        await screen.chat_log.end_reply(_("failed: {error}").format(error=message.error))
        if message.history_error is not None:
            screen.history_failed(message.history_error, _("Cannot save the reply"))
        else:
            screen.notify(message.error, title=_("The model failed"), severity="error",
                          timeout=10, markup=False)  # fmt: skip
        screen.prefill.warm_up()
