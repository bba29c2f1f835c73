"""Messages the reply worker posts to the app, named for what has happened."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from gptoss_local.backends.base import BackendInfo, Stats
from gptoss_local.session.errors import HistoryError


@dataclass
class BackendLoaded(Message):
    """The backend is ready; `info` says what is loaded and where."""

    info: BackendInfo


@dataclass
class ReplyStreamed(Message):
    """A batch of text streamed since the last batch (deltas coalesced by the worker)."""

    reasoning: str
    answer: str


@dataclass
class ReplyFinished(Message):
    """The reply ended, by itself or because the user stopped it."""

    stats: Stats | None
    stopped: bool


@dataclass
class ReplyFailed(Message):
    """The backend raised, or the history did (`history_error`); the reply is saved as failed
    with this error where the history still can."""

    error: str
    history_error: HistoryError | None = None
