"""The chat's widgets: a user message, a streamed reply with its reasoning, the input box."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Collapsible, Markdown, Static, TextArea
from textual.widgets.markdown import MarkdownStream

from gptoss_local.events import ToolCall
from gptoss_local.session.records import StoredMessage
from gptoss_local.tools import ToolOutput
from gptoss_local.tui.tool_views import ToolCallView

# Keys of a message in focus (Tab, Shift+Tab or a click): the chat screen's copy actions.
MESSAGE_BINDINGS: list[BindingType] = [
    Binding("c", "screen.copy_message", "Copy", show=False),
    Binding("b", "screen.copy_code", "Copy code", show=False),
    Binding("up", "screen.focus_message(-1)", "Previous message", show=False),
    Binding("down", "screen.focus_message(1)", "Next message", show=False),
]


NO_ANSWER = "no answer"
NO_ANSWER_AFTER_REASONING = "no answer: the model only reasoned"


class UserMessage(Static, can_focus=True):
    """What the user sent (shown as typed, not as Markdown); focusable, to copy it."""

    DEFAULT_CSS = """
    UserMessage { margin: 1 0 0 0; padding: 0 1; background: $boost; }
    UserMessage:focus { background: $primary 30%; }
    """
    BINDINGS: ClassVar[list[BindingType]] = MESSAGE_BINDINGS

    def __init__(self, text: str) -> None:
        super().__init__(text, markup=False)
        self.text = text


class ReplyView(Vertical, can_focus=True):
    """One assistant reply (one model turn): the reasoning in a Collapsible, the answer below,
    both streamed, then the tool calls the turn ended with (`ToolCallView`s).

    While the model thinks the reasoning is open with "Thinking… Ns"; it collapses when the
    answer starts. Text arrives through `MarkdownStream`s, which merge writes that come faster
    than the widget can render, so the document is never re-rendered per token. It takes the
    focus (as does its reasoning's title) so that it can be copied.
    """

    DEFAULT_CSS = """
    ReplyView { height: auto; margin: 1 0 0 0; }
    ReplyView:focus-within { background: $primary 15%; }
    ReplyView Collapsible { border-top: none; padding-bottom: 0; }
    ReplyView .reasoning { color: $text-muted; }
    ReplyView .note { color: $text-warning; }
    """
    BINDINGS: ClassVar[list[BindingType]] = MESSAGE_BINDINGS

    def __init__(
        self,
        reasoning: str = "",
        answer: str = "",
        *,
        live: bool = False,
        note: str = "",
        keep_open: bool = False,
        calls: Sequence[ToolCall] = (),
    ) -> None:
        super().__init__()
        self.call_views = [ToolCallView(call) for call in calls]
        self.keep_open = keep_open  # the user asked to see all reasoning
        self._initial = (reasoning, answer)
        self.live = live
        self.answering = bool(answer)
        self.reasoning_text, self.answer_text = reasoning, answer
        self._note = note
        self._started = time.monotonic()
        self._streams: dict[str, MarkdownStream] = {}
        self._timer: Timer | None = None

    def compose(self) -> ComposeResult:
        reasoning, answer = self._initial
        title = "Thinking…" if self.live else "Reasoning"
        with Collapsible(title=title, collapsed=not (self.live or self.keep_open),
                         classes="reasoning-box"):  # fmt: skip
            yield Markdown(reasoning, classes="reasoning")
        yield Markdown(answer, classes="answer")
        yield from self.call_views
        yield Static(self._note, classes="note", markup=False)

    def on_mount(self) -> None:
        self.reasoning_box.display = self.live or bool(self.reasoning_text)
        self.query_one(".note").display = bool(self._note)
        if self.live:
            self._timer = self.set_interval(1.0, self._tick)

    @property
    def reasoning_box(self) -> Collapsible:
        """The Collapsible holding the reasoning."""
        return self.query_one(".reasoning-box", Collapsible)

    async def add(self, reasoning: str, answer: str) -> None:
        """Stream a batch of text into the reply."""
        if reasoning:
            self.reasoning_text += reasoning
            await self._stream(".reasoning").write(reasoning)
        if answer:
            if not self.answering:
                self.answering = True
                self._stop_timer()
                self.reasoning_box.collapsed = not self.keep_open
                self.reasoning_box.title = f"Thought for {self._elapsed()}"
                self.reasoning_box.display = bool(self.reasoning_text)
            self.answer_text += answer
            await self._stream(".answer").write(answer)

    async def add_call(self, call: ToolCall) -> ToolCallView:
        """Show a call the turn ended with (the turn's text is over: the clock stops)."""
        if self.live:
            await self.finish()
        view = ToolCallView(call)
        self.call_views.append(view)
        await self.mount(view, before=self.query_one(".note"))
        return view

    async def finish(self, note: str = "") -> None:
        """End the stream: render what is left, stop the clock, show how it ended."""
        self._stop_timer()
        for stream in self._streams.values():
            await stream.stop()
        self._streams.clear()
        box = self.reasoning_box
        if self.live and not self.answering:
            box.title = f"Thought for {self._elapsed()}"
        self.live = False
        box.display = bool(self.reasoning_text)
        if not self.answering:
            box.collapsed = not self.keep_open
        if not note and not self.answer_text.strip() and not self.call_views:
            note = NO_ANSWER_AFTER_REASONING if self.reasoning_text else NO_ANSWER
        label = self.query_one(".note", Static)
        label.update(note)
        label.display = bool(note)

    def _stream(self, selector: str) -> MarkdownStream:
        if selector not in self._streams:
            self._streams[selector] = Markdown.get_stream(self.query_one(selector, Markdown))
        return self._streams[selector]

    def _tick(self) -> None:
        if not self.answering:
            self.reasoning_box.title = f"Thinking… {self._elapsed()}"

    def _stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    def _elapsed(self) -> str:
        return f"{time.monotonic() - self._started:.0f}s"


class ChatInput(TextArea):
    """The message box: Enter sends, Shift+Enter or Ctrl+J starts a new line.

    Up on the first line (or in an empty box) recalls the previous message of `past`, Down on
    the last line the next one, and after the newest what was being typed before.
    """

    DEFAULT_CSS = "ChatInput { height: auto; max-height: 10; min-height: 3; }"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.past: list[str] = []  # the messages Up can recall, oldest first
        self._index: int | None = None  # which of them is shown; None: the draft
        self._draft = ""

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

    async def _on_key(self, event: events.Key) -> None:
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
    """The messages of the open chat, scrolled to the newest (unless the user scrolls up)."""

    async def show(self, messages: list[StoredMessage], keep_open: bool) -> None:
        """Replace the log with stored `messages`; `keep_open` opens all reasoning."""
        await self.remove_children()
        await self.mount_all(views_of(messages, keep_open))


def views_of(messages: list[StoredMessage], keep_open: bool) -> list[UserMessage | ReplyView]:
    """The widgets of stored messages: a tool row's result goes to the call it answers (the
    calls of the reply before it, in order)."""
    views: list[UserMessage | ReplyView] = []
    waiting: list[ToolCallView] = []  # calls of the last reply without a result yet
    for message in messages:
        if message.role == "tool":
            if waiting:
                waiting.pop(0).output = ToolOutput(message.content)
            continue
        view = _view_of(message, keep_open)
        waiting = list(view.call_views) if isinstance(view, ReplyView) else []
        views.append(view)
    return views


def _view_of(message: StoredMessage, keep_open: bool) -> UserMessage | ReplyView:
    if message.role == "user":
        return UserMessage(message.content)
    notes = {"stopped": "stopped", "partial": "interrupted: Ctrl+R writes it again"}
    note = notes.get(message.status, f"failed: {message.error}" if message.error else "")
    if not note and not message.content.strip() and not message.tool_calls:  # as when live
        note = NO_ANSWER_AFTER_REASONING if message.reasoning else NO_ANSWER
    return ReplyView(message.reasoning, message.content, note=note, keep_open=keep_open,
                     calls=message.tool_calls)  # fmt: skip


class ScrollWhenNeeded(VerticalScroll):
    """A scrolling container that is a Tab stop only when its content overflows (so a screen
    that fits does not spend a key press on focusing the container)."""

    def allow_focus(self) -> bool:
        return self.max_scroll_y > 0
