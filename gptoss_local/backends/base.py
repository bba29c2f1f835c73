"""The contract every backend keeps, and the types that cross it.

A backend loads one model and streams replies. `stream()` yields the Harmony events of
`gptoss_local.events` as the model produces them and always ends with one `Finished` carrying the
stats, also when the reply was cancelled or cut short.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Literal, Protocol

from gptoss_local.errors import UserError
from gptoss_local.events import Event
from gptoss_local.harmony import Message, Tool
from gptoss_local.kinds import EFFORTS

StopReason = Literal["return", "call", "length", "context_full", "cancelled", "end_of_stream"]


@dataclass(frozen=True)
class Conversation:
    """Everything the model sees: history, the user's instructions, tools, and the date."""

    messages: tuple[Message, ...]
    instructions: str | None = None
    tools: tuple[Tool, ...] = ()
    current_date: dt.date | None = None


@dataclass(frozen=True)
class GenerationSettings:
    """How to sample. The defaults are gpt-oss's recommended ones (temperature 1, top-p 1).

    temperature 0 means greedy; top_k 0 and top_p 1 switch those stages off.
    """

    effort: str = "medium"
    max_tokens: int | None = None
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    min_p: float = 0.0
    seed: int | None = None
    grammar: str | None = None  # GBNF constraining the raw output, for structured replies
    logit_bias: tuple[tuple[int, float], ...] = ()  # (token id, bias); -inf bans a token
    # Sample inside llama.cpp's compute graph (on the GPU) instead of after it, saving a round
    # trip per token; llama.cpp calls this experimental. Falls back to the CPU when refused.
    backend_sampling: bool = False

    def __post_init__(self) -> None:
        if self.effort not in EFFORTS:
            raise ValueError(f"effort must be one of {', '.join(EFFORTS)}, not {self.effort!r}")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ValueError("max_tokens must be at least 1")


@dataclass(frozen=True)
class Stats:
    """What one reply cost. Times in seconds; token counts are model tokens."""

    prompt_tokens: int = 0
    cached_tokens: int = 0  # prompt tokens whose KV cache was reused from the last turn
    evaluated_tokens: int = 0  # prompt tokens actually computed this turn
    generated_tokens: int = 0
    reasoning_tokens: int = 0
    answer_tokens: int = 0
    prefill_seconds: float = 0.0
    ttft_seconds: float | None = None  # from the call to the first reasoning or answer text
    decode_seconds: float = 0.0
    decode_tokens_per_second: float | None = None
    stop_reason: StopReason = "end_of_stream"
    context_size: int = 0
    context_used: int = 0


@dataclass(frozen=True)
class Finished:
    """The last item of every stream."""

    stats: Stats


@dataclass(frozen=True)
class BackendInfo:
    """What is loaded and where, for status lines."""

    backend: str
    model: str
    placement: str
    context_size: int
    details: dict[str, str] = field(default_factory=dict)


BackendErrorKind = Literal[
    "error",  # anything else
    "bad_file",  # the GGUF cannot be used
    "aborted",  # a load stopped by the user
    "load_failed",
    "out_of_memory",
    "context_full",
    "decode_failed",
    "not_installed",  # Ollama is not installed
    "ollama_too_old",
    "daemon_failed",
    "stream_broken",  # a reply broke off mid-stream
    "offline",  # a download was needed in offline mode
    "pull_failed",
]


class BackendError(UserError):
    """A backend failure with a message for the user; `hint` says what to do, `kind` what broke
    (so callers can react, e.g. offer a smaller plan after "out_of_memory")."""

    def __init__(
        self, message: str, hint: str | None = None, kind: BackendErrorKind = "error"
    ) -> None:
        super().__init__(message, hint)
        self.kind: BackendErrorKind = kind


# Loading reports (fraction done 0..1, what is happening); returning False aborts the load.
LoadProgress = Callable[[float, str], bool]


def no_load_progress(_fraction: float, _what: str) -> bool:
    """A load progress callback that ignores reports and never aborts."""
    return True


class Backend(Protocol):
    """One loaded model that streams replies."""

    def info(self) -> BackendInfo:
        """What is loaded."""
        ...

    def stream(
        self,
        conversation: Conversation,
        settings: GenerationSettings,
        cancel: threading.Event | None = None,
    ) -> Iterator[Event | Finished]:
        """Yield events for the assistant's next turn, then one `Finished`."""
        ...

    def prefill(
        self,
        conversation: Conversation,
        settings: GenerationSettings,
        cancel: threading.Event | None = None,
    ) -> int:
        """Evaluate ahead of time what the next turn's prompt will start with (the whole
        conversation so far), so the reply to the user's next message starts sooner.

        Called while the user is typing; `cancel` stops it between batches, keeping what was
        evaluated. Returns the number of tokens evaluated (0 for backends without a cache that
        can be warmed this way).
        """
        ...

    def close(self) -> None:
        """Free the model; the backend cannot be used afterwards."""
        ...
