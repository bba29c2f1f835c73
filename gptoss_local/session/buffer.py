"""In-memory buffer of streamed reply text, so that saving a reply costs little per token.

A model streams hundreds of deltas a second; one SQLite write each would cost more than the
token. Deltas are collected here and written when `flush_interval` seconds have passed since
the last write or `flush_chars` characters are waiting, and always when the reply ends. After a
crash at most the text of the last interval is lost.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from gptoss_local.events import ToolCall


@dataclass
class Pending:
    """What one reply has received since its last write."""

    last_flush: float
    reasoning: list[str] = field(default_factory=list)
    content: list[str] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)
    chars: int = 0

    def take(self, now: float) -> tuple[str, str, list[ToolCall]]:
        """The waiting reasoning, content and calls; the buffer is empty afterwards."""
        out = ("".join(self.reasoning), "".join(self.content), self.tool_calls)
        self.reasoning, self.content, self.tool_calls = [], [], []
        self.chars, self.last_flush = 0, now
        return out


class DeltaBuffer:
    """Pending text per reply id. Not thread-safe by itself: `History` holds its lock around it."""

    def __init__(
        self,
        flush_interval: float = 0.1,
        flush_chars: int = 4096,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Set when a reply's text is due for writing.

        Args:
            flush_interval: Seconds between writes of one reply while it streams.
            flush_chars: Write sooner when this many characters are waiting.
            clock: Monotonic seconds; injectable for tests.
        """
        self.flush_interval = flush_interval
        self.flush_chars = flush_chars
        self.clock = clock
        self._pending: dict[int, Pending] = {}

    def __contains__(self, message_id: int) -> bool:
        return message_id in self._pending

    def ids(self) -> list[int]:
        """The replies being buffered."""
        return list(self._pending)

    def start(self, message_id: int) -> None:
        """Begin buffering a reply (its first write is due one interval from now)."""
        self._pending.setdefault(message_id, Pending(last_flush=self.clock()))

    def add(self, message_id: int, reasoning: str = "", content: str = "") -> bool:
        """Buffer text for a started reply; True when it is due to be written."""
        pending = self._pending[message_id]
        if reasoning:
            pending.reasoning.append(reasoning)
        if content:
            pending.content.append(content)
        pending.chars += len(reasoning) + len(content)
        return self._due(pending)

    def add_call(self, message_id: int, call: ToolCall) -> bool:
        """Buffer a tool call; True, since a call is rare and worth keeping at once."""
        self._pending[message_id].tool_calls.append(call)
        return True

    def _due(self, pending: Pending) -> bool:
        if pending.chars >= self.flush_chars:
            return True
        return pending.chars > 0 and self.clock() - pending.last_flush >= self.flush_interval

    def take(self, message_id: int) -> tuple[str, str, list[ToolCall]]:
        """Empty the buffer of a reply and return its reasoning, content and calls."""
        pending = self._pending.get(message_id)
        if pending is None:
            return "", "", []
        return pending.take(self.clock())

    def restore(self, message_id: int, reasoning: str, content: str, calls: list[ToolCall]) -> None:
        """Put text taken by `take` back in front (its write failed), to be written later."""
        pending = self._pending.setdefault(message_id, Pending(last_flush=self.clock()))
        pending.reasoning[:0] = [reasoning] if reasoning else []
        pending.content[:0] = [content] if content else []
        pending.tool_calls[:0] = calls
        pending.chars += len(reasoning) + len(content)

    def stop(self, message_id: int) -> tuple[str, str, list[ToolCall]]:
        """Like `take`, and forget the reply."""
        out = self.take(message_id)
        self._pending.pop(message_id, None)
        return out
