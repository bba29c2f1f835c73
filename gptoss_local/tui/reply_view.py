"""A reply in the chat: one model turn's reasoning and answer, streamed, and the tool calls it
ended with, each step shown as the reply's worker reports it.

While a reply is written the turn's view also asks the user about a call (`ask`): the dialog's
answer goes to the worker waiting on it, and a reply that ends first closes the dialog as a
denial (`end_calls`). The UI thread never blocks on it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.timer import Timer
from textual.widgets import Collapsible, Markdown, Static
from textual.widgets.markdown import MarkdownStream

from gptoss_local.backends.base import Stats
from gptoss_local.conversation import Citation, file_link
from gptoss_local.events import ToolCall
from gptoss_local.i18n import N_, _, translate
from gptoss_local.session.export import linked
from gptoss_local.tools import (
    Decision,
    ToolCallApproved,
    ToolCallDenied,
    ToolCallFinished,
    ToolCallRequested,
)
from gptoss_local.tui.approval import ApprovalScreen
from gptoss_local.tui.file_links import file_link_parser, prepare_link_encoding
from gptoss_local.tui.messages import ToolApprovalAsked
from gptoss_local.tui.tool_views import ToolCallView

# Keys of a message in focus (Tab, Shift+Tab or a click): the chat screen's copy actions.
MESSAGE_BINDINGS: list[BindingType] = [
    Binding("c", "screen.copy_message", _("Copy"), show=False),
    Binding("b", "screen.copy_code", _("Copy code"), show=False),
    Binding("up", "screen.focus_message(-1)", _("Previous message"), show=False),
    Binding("down", "screen.focus_message(1)", _("Next message"), show=False),
]

NO_ANSWER = N_("no answer")
NO_ANSWER_AFTER_REASONING = N_("no answer: the model only reasoned")
# How a chain that ended otherwise than with an answer is noted under its last turn.
ENDED = {
    "limit": N_("stopped: the model kept calling tools past the limit of calls per reply"),
    "not_a_tool": N_("stopped: the model called a tool that is not offered here"),
    "external_call": N_("stopped: the model called a function this chat cannot run"),
}
# How a reply the engine cut short is noted, by its last turn's stop reason: live, and again
# whenever the chat is reopened (the stored stats keep the reason).
CUT_OFF = {
    "context_full": N_("cut off: the context was full"),
    "length": N_("cut off: the reply reached its token limit"),
}


def cut_off_note(stats: Stats | None) -> str:
    """The note of a reply the engine cut short (`CUT_OFF`), in the user's language; "" if it
    was not."""
    reason = stats.stop_reason if stats is not None else ""
    return translate(CUT_OFF[reason]) if reason in CUT_OFF else ""


def end_note(stopped: bool, ended: str, stats: Stats | None) -> str:
    """How a reply that has just ended is noted under its last turn: stopped by the user, cut
    short by the engine, or a chain of tool calls that ended otherwise than with an answer."""
    if stopped:
        return _("stopped")
    return cut_off_note(stats) or translate(ENDED.get(ended, ""))


ToolStep = ToolCallRequested | ToolCallApproved | ToolCallDenied | ToolCallFinished


def sources_markdown(citations: Sequence[Citation]) -> str:
    """The files and lines an answer cites, as links ("" when it cites none)."""
    if not citations:
        return ""
    links = " · ".join(f"[{c.label}]({file_link(c)})" for c in citations)
    return _("**Sources:** {links}").format(links=links)


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
    ReplyView .sources { color: $text-muted; margin: 0; }
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
        citations: Sequence[Citation] = (),
    ) -> None:
        super().__init__()
        self.citations = tuple(citations)
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
        self._asking: ApprovalScreen | None = None  # the dialog the reply's worker waits on

    def compose(self) -> ComposeResult:
        reasoning, answer = self._initial
        title = _("Thinking…") if self.live else _("Reasoning")
        with Collapsible(title=title, collapsed=not (self.live or self.keep_open),
                         classes="reasoning-box"):  # fmt: skip
            yield Markdown(reasoning, classes="reasoning")
        prepare_link_encoding()
        yield Markdown(linked(answer, self.citations), classes="answer",
                       parser_factory=file_link_parser)  # fmt: skip
        yield Markdown(sources_markdown(self.citations), classes="sources",
                       parser_factory=file_link_parser)  # fmt: skip
        yield from self.call_views
        yield Static(self._note, classes="note", markup=False)

    def on_mount(self) -> None:
        self.reasoning_box.display = self.live or bool(self.reasoning_text)
        self.query_one(".note").display = bool(self._note)
        self.query_one(".sources").display = bool(self.citations)
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
                self.reasoning_box.title = _("Thought for {time}").format(time=self._elapsed())
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
            box.title = _("Thought for {time}").format(time=self._elapsed())
        self.live = False
        box.display = bool(self.reasoning_text)
        if not self.answering:
            box.collapsed = not self.keep_open
        if not note and not self.answer_text.strip() and not self.call_views:
            note = translate(NO_ANSWER_AFTER_REASONING if self.reasoning_text else NO_ANSWER)
        label = self.query_one(".note", Static)
        label.update(note)
        label.display = bool(note)

    async def show_citations(self, citations: Sequence[Citation]) -> None:
        """Show the files and lines the answer cites: each citation becomes a link to its
        file and lines, and the sources are listed under the answer."""
        self.citations = tuple(citations)
        if not self.citations:
            return
        await self.query_one(".answer", Markdown).update(linked(self.answer_text, self.citations))
        sources = self.query_one(".sources", Markdown)
        await sources.update(sources_markdown(self.citations))
        sources.display = True

    def keep_reasoning_open(self, keep_open: bool) -> None:
        """Open or close the reasoning, as the user asked for every reply (Ctrl+T)."""
        self.keep_open = keep_open  # also for a reply still thinking
        if self.reasoning_text:
            self.reasoning_box.collapsed = not keep_open

    async def show_step(self, step: ToolStep) -> None:
        """Show one step of a call this turn ended with: its line when it is requested, then
        who let it run (or not), then its result, folded."""
        if isinstance(step, ToolCallRequested):
            await self.add_call(step.call)
            return
        view = next((v for v in self.call_views if v.call is step.call and v.output is None),
                    None)  # fmt: skip
        if view is None:
            return
        if isinstance(step, ToolCallFinished):
            view.finished(step.output, step.seconds)
        else:
            view.decided(step.how)

    def ask(self, asked: ToolApprovalAsked) -> None:
        """Ask the user about a call of this turn; the answer goes to the waiting worker."""
        answer = asked.answer
        if answer.done():  # answered already: nothing to ask
            return

        def answered(decision: Decision | None) -> None:
            self._asking = None
            if not answer.done():
                answer.set_result(decision or "deny")

        self._asking = ApprovalScreen(asked.call, asked.tool)
        self.app.push_screen(self._asking, answered)

    def end_calls(self) -> None:
        """The reply is over: calls that never ran say so, and an open dialog closes (deny)."""
        for view in self.call_views:
            view.not_run(_("not run"))  # only those without a result
        asking, self._asking = self._asking, None
        if asking is not None and asking.is_current:
            asking.dismiss("deny")

    def _stream(self, selector: str) -> MarkdownStream:
        if selector not in self._streams:
            self._streams[selector] = Markdown.get_stream(self.query_one(selector, Markdown))
        return self._streams[selector]

    def _tick(self) -> None:
        if not self.answering:
            self.reasoning_box.title = _("Thinking… {time}").format(time=self._elapsed())

    def _stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    def _elapsed(self) -> str:
        return f"{time.monotonic() - self._started:.0f}s"
