"""What a tool loop reports besides the model's own events (`gptoss_local.events`).

In order, per model turn: the backend's events as they stream, then `ReplyEnded` with the
assistant message as it goes into the conversation; for each call the model made,
`ToolCallRequested`, then `ToolCallApproved` or `ToolCallDenied` (none when the call could
not run at all: bad arguments, an unknown tool, the limit), then `ToolCallFinished` with the
result the model reads; and last of all `ChainEnded`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gptoss_local.backends.base import Stats
from gptoss_local.conversation import Citation, Message
from gptoss_local.events import Event, ToolCall
from gptoss_local.tools.approvals import How
from gptoss_local.tools.registry import ToolInfo
from gptoss_local.tools.result import ToolOutput

ChainEndReason = Literal[
    "answered",  # the model ended its turn without a call
    "cancelled",  # the cancel event was set
    "limit",  # the model kept calling after the per-reply limit was reached
    "external_call",  # a call of a function the caller runs (`run --tools`): its turn now
    "not_a_tool",  # the model addressed something not offered (e.g. browser.search, no browser)
    "unfinished",  # the output ended inside a call, or without ending the turn
]


@dataclass(frozen=True)
class ReplyEnded:
    """One model turn is over: the message as it joins the conversation, what it cost, and
    the browser's citations in its answer, resolved to files and lines."""

    message: Message
    stats: Stats | None
    citations: tuple[Citation, ...] = ()


@dataclass(frozen=True)
class ToolCallRequested:
    """The model asked for a call; `tool` is None when no tool has that name."""

    call: ToolCall
    tool: ToolInfo | None


@dataclass(frozen=True)
class ToolCallApproved:
    """The call may run: `how` says who allowed it (settings, "always", "once")."""

    call: ToolCall
    how: How


@dataclass(frozen=True)
class ToolCallDenied:
    """The call does not run: the user said no, or no one could be asked."""

    call: ToolCall
    how: How


@dataclass(frozen=True)
class ToolCallFinished:
    """The call's result, as the model reads it (and the history keeps it)."""

    call: ToolCall
    output: ToolOutput
    seconds: float = 0.0


@dataclass(frozen=True)
class ChainEnded:
    """The loop is over."""

    reason: ChainEndReason


LoopEvent = (
    Event
    | ReplyEnded
    | ToolCallRequested
    | ToolCallApproved
    | ToolCallDenied
    | ToolCallFinished
    | ChainEnded
)
