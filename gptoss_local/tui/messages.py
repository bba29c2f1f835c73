"""Messages the chat's workers and services post to the UI, named for what has happened."""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass

from textual.message import Message

from gptoss_local.backends.base import BackendInfo, GenerationSettings, Stats
from gptoss_local.chat.context_keeper import Compacting
from gptoss_local.conversation import Citation
from gptoss_local.events import ToolCall
from gptoss_local.hardware.vram import VramUse
from gptoss_local.session.errors import HistoryError
from gptoss_local.session.records import Compaction
from gptoss_local.tools import (
    Decision,
    ToolCallApproved,
    ToolCallDenied,
    ToolCallFinished,
    ToolCallRequested,
    ToolInfo,
)


@dataclass
class ModelChosen(Message):
    """The user chose a model on the first-run screen (again on F9: `switched`), and it is
    loading; replies use its sampling settings, `generation`."""

    generation: GenerationSettings
    switched: bool


@dataclass
class ModelLoadStarted(Message):
    """Loading `model` has begun."""

    model: str


@dataclass
class LoadProgressed(Message):
    """The load is `fraction` done, doing `what` (already thinned out by the banner)."""

    fraction: float
    what: str

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, LoadProgressed)


@dataclass
class ModelLoadFailed(Message):
    """The load failed; `error` says why and what to do."""

    error: str


@dataclass
class BackendLoaded(Message):
    """The backend is ready; `info` says what is loaded and where."""

    info: BackendInfo


class ReplyReport(Message):
    """What a reply's worker reports on the way (but its end): the chat screen hands each one,
    in the order it came, to `ReplyFlow.hear`. Handled as one (`@on(ReplyReport)`), never sent."""


@dataclass
class ReplyStreamed(ReplyReport):
    """A batch of text streamed since the last batch (deltas coalesced by the worker)."""

    reasoning: str
    answer: str


@dataclass
class ReplyFinished(Message):
    """The reply ended, by itself or because the user stopped it; `ended` is why its chain
    of tool calls ended (`tools.events.ChainEndReason`: "answered" for a plain reply).
    `stats` are those of its last model turn; `citations` the files and lines its answer
    cites (the browser's)."""

    stats: Stats | None
    stopped: bool
    ended: str = "answered"
    citations: tuple[Citation, ...] = ()


@dataclass
class ToolCallReported(ReplyReport):
    """A step of a tool call: requested, approved or denied, finished (with its result)."""

    step: ToolCallRequested | ToolCallApproved | ToolCallDenied | ToolCallFinished


@dataclass
class ReplyContinued(ReplyReport):
    """The model's next turn began, after the results of its calls."""


@dataclass
class ToolsOpened(Message):
    """The chat's tools are ready; `problems` says what could not be offered, and why."""

    problems: list[str]


@dataclass
class ToolApprovalAsked(ReplyReport):
    """A reply waits for the user's answer about a call (`answer` is set with it)."""

    call: ToolCall
    tool: ToolInfo
    answer: Future[Decision]


@dataclass
class ReplyFailed(ReplyReport):
    """The backend raised, or the history did (`history_error`); the reply is saved as failed
    with this error where the history still can."""

    error: str
    history_error: HistoryError | None = None


@dataclass
class EngineWaiting(ReplyReport):
    """The reply waits behind this client's on the shared engine ("": no longer waits)."""

    client: str


@dataclass
class VramMeasured(Message):
    """A read of VRAM use finished; None: no GPU, or NVML failed (no more reads come)."""

    use: VramUse | None


@dataclass
class HistoryFailed(Message):
    """The history failed (`error`) while doing what `title` says; the screen shows it."""

    error: HistoryError
    title: str


@dataclass
class CompactionReported(ReplyReport):
    """Before the reply: older turns are being summarised (`Compacting`), or the compaction
    that now starts the chat's prompts was saved."""

    event: Compacting | Compaction


@dataclass
class ContextRefused(ReplyReport):
    """The message just sent does not fit the context by the chat's policy: nothing was
    generated, and the message is to go back to the input box (`error` says why)."""

    error: str
