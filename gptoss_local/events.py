"""Events a model turn produces, shared by the Harmony parser and every backend.

A consumer reads them in order: text deltas as they stream, at most one `ToolCall` per
tool message, and exactly one `TurnEnded` last.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

TurnEndReason = Literal["return", "call", "end_of_stream", "truncated"]
TURN_END_REASONS: frozenset[str] = frozenset({"return", "call", "end_of_stream", "truncated"})


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """A piece of chain of thought (analysis channel, or text of unknown purpose)."""

    text: str


@dataclass(frozen=True, slots=True)
class AnswerDelta:
    """A piece of the final answer meant for the user."""

    text: str


@dataclass(frozen=True, slots=True)
class PreambleDelta:
    """User-visible commentary without a recipient, e.g. a plan before tool calls."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A complete request to call a tool: a function (``functions.NAME``, `name` NAME), a
    tool of another namespace (`name` ``NAMESPACE.NAME``) or a built-in.

    `arguments` is the parsed JSON object; when parsing failed it is empty, `error` says why
    and `raw` keeps the text the model wrote so it can be shown or sent back. The built-in
    ``python`` tool takes code, not JSON: its arguments are ``{"code": raw}``. `channel` is
    where the model wrote the call ("commentary" for functions, usually "analysis" for
    built-ins); the tool's answer goes back on the same channel.
    """

    name: str
    arguments: dict[str, Any]
    raw: str
    error: str | None = None
    channel: str = "commentary"


@dataclass(frozen=True, slots=True)
class TurnEnded:
    """The end of the turn.

    reason: "return" (final answer done), "call" (stopped to run a tool), "end_of_stream"
    (output ended between messages), "truncated" (output ended inside a message).
    """

    reason: TurnEndReason

    def __post_init__(self) -> None:
        if self.reason not in TURN_END_REASONS:
            allowed = ", ".join(sorted(TURN_END_REASONS))
            raise ValueError(f"unknown turn end reason {self.reason!r}; expected one of {allowed}")


Event = ReasoningDelta | AnswerDelta | PreambleDelta | ToolCall | TurnEnded
TEXT_EVENTS = (ReasoningDelta, AnswerDelta, PreambleDelta)


def merge_events(events: Iterable[Event]) -> list[Event]:
    """Join adjacent text deltas of the same type (for tests and non-streaming callers).

    Args:
        events: Events in stream order.

    Returns:
        The same events with each run of one delta type merged into a single delta.
    """
    out: list[Event] = []
    for event in events:
        last = out[-1] if out else None
        same = isinstance(last, TEXT_EVENTS) and type(last) is type(event)
        if same and isinstance(event, TEXT_EVENTS) and isinstance(last, TEXT_EVENTS):
            out[-1] = type(event)(last.text + event.text)
        else:
            out.append(event)
    return out
