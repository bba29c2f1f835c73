"""The chat's widgets: a user message, the input box, and the log of the open chat's messages
(the replies themselves are `reply_view.ReplyView`s)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from textual import events, on
from textual.binding import BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static, TextArea

from gptoss_local.conversation import Citation
from gptoss_local.i18n import _, translate
from gptoss_local.session.records import Compaction, StoredMessage
from gptoss_local.tools import ToolOutput
from gptoss_local.tui.attachment_widgets import AttachmentList
from gptoss_local.tui.compaction_view import CompactingNote, CompactionMarker
from gptoss_local.tui.mention_menu import MentionCompleter
from gptoss_local.tui.messages import ToolApprovalAsked
from gptoss_local.tui.reply_view import (
    MESSAGE_BINDINGS,
    NO_ANSWER,
    NO_ANSWER_AFTER_REASONING,
    ReplyView,
    ToolStep,
    cut_off_note,
)
from gptoss_local.tui.tool_views import ToolCallView


class UserMessage(Static, can_focus=True):
    """What the user sent (shown as typed, not as Markdown); focusable, to copy it."""

    DEFAULT_CSS = """
    UserMessage { margin: 1 0 0 0; padding: 0 1; background: $boost; }
    UserMessage:focus { background: $primary 30%; }
    """
    BINDINGS: ClassVar[list[BindingType]] = MESSAGE_BINDINGS

    def __init__(self, text: str, seq: int | None = None) -> None:
        super().__init__(text, markup=False)
        self.text = text
        self.seq = seq  # its place in the chat, where a compaction marker may go before it


class ChatInput(TextArea):
    """The message box: Enter sends, Shift+Enter or Ctrl+J starts a new line.

    Up on the first line (or in an empty box) recalls the previous message of `past`, Down on
    the last line the next one, and after the newest what was being typed before.
    """

    DEFAULT_CSS = "ChatInput { height: auto; max-height: 10; min-height: 3; }"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.completer: MentionCompleter | None = None  # `@` paths, set by the screen
        self.past: list[str] = []  # the messages Up can recall, oldest first
        self._index: int | None = None  # which of them is shown; None: the draft
        self._draft = ""

    def begin_edit(self, text: str) -> None:
        """Put `text` in the box to be edited, the cursor at its end, and focus it."""
        self.text = text
        self.move_cursor(self.document.end)
        self.focus()

    def remember(self, text: str) -> None:
        """Add a sent message to what Up recalls, and stop browsing."""
        self.past.append(text)
        self._index = None

    def set_past(self, messages: list[str]) -> None:
        """Replace what Up recalls (another chat was opened)."""
        self.past, self._index = list(messages), None

    def action_cursor_up(self, select: bool = False) -> None:
        """Move up a line, or recall the previous message from the first line."""
        if select or self.cursor_location[0] > 0 or not self._recall(-1):
            super().action_cursor_up(select)

    def action_cursor_down(self, select: bool = False) -> None:
        """Move down a line, or from the last line go on to the next recalled message."""
        last_line = self.cursor_location[0] == self.document.line_count - 1
        if select or self._index is None or not last_line or not self._recall(1):
            super().action_cursor_down(select)

    def _recall(self, step: int) -> bool:
        index = len(self.past) if self._index is None else self._index
        index += step
        if index < 0 or index > len(self.past) or (self._index is None and step > 0):
            return False
        if self._index is None:
            self._draft = self.text  # kept, so Down past the newest gives it back
        self._index = None if index == len(self.past) else index
        self.text = self._draft if self._index is None else self.past[index]
        self.move_cursor(self.document.end)
        return True

    @dataclass
    class Submitted(Message):
        """The user pressed Enter with this text."""

        text: str

    @on(TextArea.Changed)
    @on(TextArea.SelectionChanged)
    def _mention(self) -> None:
        if self.completer is not None:
            self.completer.refresh()

    def on_blur(self) -> None:
        if self.completer is not None:
            self.completer.close()

    async def _on_key(self, event: events.Key) -> None:
        if self.completer is not None and self.completer.handle_key(event):
            return  # the path menu took the key: Enter accepts a path, it does not send
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self.post_message(self.Submitted(self.text))
            return
        if event.key in ("shift+enter", "ctrl+j"):
            event.stop()
            event.prevent_default()
            self.insert("\n")
            return
        await super()._on_key(event)


class ChatLog(VerticalScroll):
    """The messages of the open chat, scrolled to the newest (unless the user scrolls up), and
    the reply being written: a live `ReplyView` per model turn, which shows its tool calls.

    The screen passes on what the reply's worker reports; the log keeps which view it goes to.
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.keep_open = False  # the user asked to see all reasoning (Ctrl+T)
        self.live: ReplyView | None = None  # the model turn being written, if a reply is

    async def show(
        self, messages: list[StoredMessage], compactions: Sequence[Compaction] = ()
    ) -> None:
        """Replace the log with stored `messages`, and a marker for each compaction."""
        await self.remove_children()
        await self.mount_all(views_of(messages, self.keep_open, compactions))

    async def show_compacting(self, messages: int) -> None:
        """Say, before the reply, that older turns are being summarised."""
        await self.mount(CompactingNote(messages), before=self.live)

    async def show_compaction(self, compaction: Compaction) -> None:
        """Put the marker of a compaction just saved before the first message it keeps."""
        await self.query(CompactingNote).remove()
        kept = [view for view in self.query(UserMessage) if view.seq == compaction.before_seq]
        await self.mount(CompactionMarker(compaction), before=kept[0] if kept else self.live)

    def toggle_reasoning(self) -> None:
        """Open or close the reasoning of every reply, also those still to come."""
        self.keep_open = not self.keep_open
        for view in self.query(ReplyView):
            view.keep_reasoning_open(self.keep_open)

    async def new_turn(self) -> None:
        """Show a new live reply view: the reply's first model turn, or the next after calls."""
        if self.live is not None:
            await self.live.finish()
        self.live = ReplyView(live=True, keep_open=self.keep_open)
        await self.mount(self.live)

    async def add(self, reasoning: str, answer: str) -> None:
        """Stream a batch of text into the turn being written."""
        if self.live is not None:
            await self.live.add(reasoning, answer)

    async def show_step(self, step: ToolStep) -> None:
        """Show a step of a tool call in the turn being written."""
        if self.live is not None:
            await self.live.show_step(step)

    def ask(self, asked: ToolApprovalAsked) -> None:
        """Ask the user about a call of the turn being written (denied if the reply is over)."""
        if self.live is not None:
            self.live.ask(asked)
        elif not asked.answer.done():  # the reply ended before the question came
            asked.answer.set_result("deny")

    async def drop_live(self) -> None:
        """Take away the reply view of a reply that never started."""
        live, self.live = self.live, None
        if live is not None:
            await live.remove()

    async def end_reply(self, note: str, citations: Sequence[Citation] = ()) -> None:
        """The reply is over: its last turn shows how it ended (`note`) and the files its
        answer cites; calls never run say so."""
        live, self.live = self.live, None
        if live is not None:
            live.end_calls()
            await live.finish(note)
            await live.show_citations(citations)


def views_of(
    messages: list[StoredMessage], keep_open: bool, compactions: Sequence[Compaction] = ()
) -> list[Widget]:
    """The widgets of stored messages: a tool row's result goes to the call it answers (the
    calls of the reply before it, in order); a compaction's marker before the first message
    it kept."""
    views: list[Widget] = []
    waiting: list[ToolCallView] = []  # calls of the last reply without a result yet
    markers = {compaction.before_seq: compaction for compaction in compactions}
    for message in messages:
        if message.seq in markers:
            views.append(CompactionMarker(markers.pop(message.seq)))
        if message.role == "tool":
            if waiting:
                waiting.pop(0).output = ToolOutput(message.content)
            continue
        view = _view_of(message, keep_open)
        waiting = list(view.call_views) if isinstance(view, ReplyView) else []
        views.append(view)
        if message.attachments:
            views.append(AttachmentList(message.attachments))
    return views


def _view_of(message: StoredMessage, keep_open: bool) -> UserMessage | ReplyView:
    if message.role == "user":
        return UserMessage(message.content, message.seq)
    notes = {"stopped": _("stopped"), "partial": _("interrupted: Ctrl+R writes it again")}
    failed = _("failed: {error}").format(error=message.error) if message.error else ""
    note = notes.get(message.status, failed) or cut_off_note(message.stats)
    if not note and not message.content.strip() and not message.tool_calls:  # as when live
        note = translate(NO_ANSWER_AFTER_REASONING if message.reasoning else NO_ANSWER)
    return ReplyView(message.reasoning, message.content, note=note, keep_open=keep_open,
                     calls=message.tool_calls, citations=message.citations)  # fmt: skip


class ScrollWhenNeeded(VerticalScroll):
    """A scrolling container that is a Tab stop only when its content overflows (so a screen
    that fits does not spend a key press on focusing the container)."""

    def allow_focus(self) -> bool:
        return self.max_scroll_y > 0
