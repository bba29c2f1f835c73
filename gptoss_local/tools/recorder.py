"""A tool loop's events saved into the chat history as they come.

Each model turn is one assistant row (begun at its first event, or the row the caller already
began), finished with its stats when `ReplyEnded` arrives ("stopped" when it was cancelled);
each call's result is a tool row. So a chat reopened later renders exactly what the model saw,
and exports show the calls and their results.
"""

from __future__ import annotations

from gptoss_local.events import TEXT_EVENTS, ToolCall
from gptoss_local.session.history import History
from gptoss_local.tools.events import LoopEvent, ReplyEnded, ToolCallFinished


class HistoryRecorder:
    """Feed it every event of `ToolLoop.run` (call it); it writes them to `history`.

    Args:
        history: The open history.
        chat_id: The chat replied to.
        reply_id: A partial assistant row begun for the first turn, if the caller made one.
        effort: The effort recorded on rows this recorder begins (default the chat's).
    """

    def __init__(
        self,
        history: History,
        chat_id: int,
        reply_id: int | None = None,
        *,
        effort: str | None = None,
    ) -> None:
        self.history, self.chat_id, self.reply_id = history, chat_id, reply_id
        self.effort = effort

    def __call__(self, event: LoopEvent) -> None:
        if isinstance(event, (*TEXT_EVENTS, ToolCall)):
            self.history.record(self._reply(), event)
        elif isinstance(event, ReplyEnded):
            if event.citations:
                self.history.add_citations(self._reply(), event.citations)
            stats = event.stats
            if stats is not None and stats.stop_reason == "cancelled":
                self.history.mark_stopped(self._reply(), stats)
            else:
                self.history.finish_assistant(self._reply(), stats)
            self.reply_id = None
        elif isinstance(event, ToolCallFinished):
            self.history.add_tool_message(self.chat_id, event.call.name, event.output.content)

    def fail(self, error: str) -> None:
        """Mark the turn in progress failed (the loop raised); nothing if none is open."""
        if self.reply_id is not None:
            self.history.fail_assistant(self.reply_id, error)
            self.reply_id = None

    def _reply(self) -> int:
        if self.reply_id is None:
            begun = self.history.begin_assistant_message(self.chat_id, effort=self.effort)
            self.reply_id = begun.id
        return self.reply_id
