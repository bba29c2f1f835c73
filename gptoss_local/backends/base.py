"""The contract every backend keeps, and the types that cross it.

A backend loads one model and streams replies. `stream()` takes a `ReplyRequest` (the
`Conversation` with the tools it offers, the `GenerationSettings`, and what is asked of this
reply besides: a response format, a tool choice) and returns a `Reply`: iterating it gives the
Harmony events of `gptoss_local.events` as the model produces them, and once it is exhausted
`Reply.stats` says what the reply cost (also when it was cancelled or cut short).

What an engine honours beyond plain text it declares in `capabilities`, and `check_request` is
the one place a request is held against them: callers run it before they stream (and turn its
`UnsupportedRequest` into their own refusal), and backends run it too, so that nothing asked
is silently dropped. An engine with the model's tokenizer says so (`tokenizer`): then
`count_prompt` and `tokenize` count exactly; callers of one without it estimate. Options only
one engine understands (a grammar, logit biases, sampling on the GPU) are that engine's own
(`LlamaOptions`), not part of the request.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

from gptoss_local.conversation import FUNCTIONS, Conversation
from gptoss_local.errors import UserError
from gptoss_local.events import Event
from gptoss_local.kinds import EFFORTS, Effort

StopReason = Literal["return", "call", "length", "context_full", "cancelled", "end_of_stream"]


@dataclass(frozen=True)
class GenerationSettings:
    """How to sample, as every backend understands it. The defaults are gpt-oss's recommended
    ones (temperature 1, top-p 1); temperature 0 means greedy, top_k 0 and top_p 1 switch those
    stages off. Unknown options are refused (a dataclass takes no others)."""

    effort: Effort = "medium"
    max_tokens: int | None = None
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    min_p: float = 0.0
    seed: int | None = None
    # OpenAI's penalties (-2..2: subtract from a token's logit per use / once used), and
    # biases by token id (-100..100); engines that cannot honour them say so (Capabilities).
    frequency_penalty: float = 0.0
    presence_penalty: float = 0.0
    logit_bias: tuple[tuple[int, float], ...] = ()

    def __post_init__(self) -> None:
        if self.effort not in EFFORTS:
            raise ValueError(f"effort must be one of {', '.join(EFFORTS)}, not {self.effort!r}")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ValueError("max_tokens must be at least 1")
        for name in ("temperature", "top_p", "min_p"):
            value = getattr(self, name)
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"{name} must be a finite number of at least 0, not {value}")
        if self.top_k < 0:
            raise ValueError(f"top_k must be 0 (off) or more, not {self.top_k}")
        for name in ("frequency_penalty", "presence_penalty"):
            value = getattr(self, name)
            if not (math.isfinite(value) and -2 <= value <= 2):
                raise ValueError(f"{name} must be between -2 and 2, not {value}")
        for token, bias in self.logit_bias:
            if token < 0 or not (math.isfinite(bias) and -100 <= bias <= 100):
                raise ValueError(f"logit_bias: token {token} with bias {bias} is out of range")


@dataclass(frozen=True)
class ResponseFormat:
    """What the reply's answer (its final message) must be: JSON that `schema` accepts (None:
    any JSON object). The reasoning before it stays free. Which engine holds a reply to it is
    `Capabilities.response_format`.
    """

    schema: dict[str, Any] | None = None
    name: str = "response"
    strict: bool = True
    description: str = ""  # shown to the model with the schema

    def prompt_text(self) -> tuple[str, str, dict[str, Any]]:
        """How the prompt shows it (Harmony's "# Response Formats"): name, description, and
        the schema (any JSON object when there is none)."""
        return self.name, self.description, self.schema or {"type": "object"}


@dataclass(frozen=True)
class ToolChoice:
    """Whether the reply must call a tool: `required`, one of the conversation's tools, or the
    one `name` names (in `namespace`); by default the model decides (the final answer stays
    allowed)."""

    required: bool = False
    name: str | None = None
    namespace: str = FUNCTIONS

    @property
    def forced(self) -> bool:
        """Whether the reply may not end without a call."""
        return self.required or self.name is not None


@dataclass(frozen=True)
class ReplyRequest:
    """One reply asked of a backend: the conversation it continues, how to sample, and what
    is asked of this reply besides (its format, its tool choice). The tools offered, and their
    kinds, are the conversation's (gpt-oss reads them in its system and developer messages).
    It travels whole from the caller to the engine: the tool loop streams each model turn as
    this request on the longer conversation (`tools.loop`).

    `cache_key` scopes the reuse of cached prompts (`serve`'s `prompt_cache_key`): a reply
    reuses only what replies of the same key (None: of no key) left in the caches.
    """

    conversation: Conversation
    settings: GenerationSettings = field(default_factory=GenerationSettings)
    response_format: ResponseFormat | None = None
    tool_choice: ToolChoice = field(default_factory=ToolChoice)
    cache_key: str | None = None


@dataclass(frozen=True)
class Capabilities:
    """What a backend can do besides streaming plain replies (as simonw/llm's
    `supports_tools` / `supports_schema`); `check_request` holds requests against it.

    Attributes:
        prefill: `Backend.prefill` evaluates the next prompt ahead, so a reply starts sooner
            (an engine that cannot evaluate without answering says False and does nothing).
        parallel: How many replies it decodes at once; more wait for their turn.
        tools: It offers the conversation's function tools and reports their calls.
        namespaces: It offers tools of namespaces other than `functions` as such (Harmony's
            namespaces, which only an engine that renders the prompt itself can write).
        freeform_tools: It offers freeform tools (`Tool.text_input`: raw text, not a JSON
            object), which only an engine that renders the prompt itself can describe; an
            engine that takes JSON-schema functions only would offer them as something else.
        builtin_tools: It offers gpt-oss's built-in tools (python) as the model knows them
            (the browser, a namespace of functions, needs `namespaces` too).
        response_format: It holds the answer to a `ResponseFormat`.
        tool_choice: It holds a reply to a forced `ToolChoice` (a call, of the named tool).
        penalties: It applies `GenerationSettings`' frequency and presence penalties.
        logit_bias: It applies `GenerationSettings.logit_bias` (token ids of its vocabulary).
        attachments: It gives the model the files attached to messages.
        keep_conversations: `Backend.keep_conversations` keeps other conversations' caches in
            RAM, so that conversations taking turns (`serve`) each reuse their own.
        tokenizer: `Backend.count_prompt` and `Backend.tokenize` count with the model's own
            tokenizer; an engine that keeps it to itself (a daemon, a server) raises
            `BackendError` from them, and callers estimate instead.
    """

    prefill: bool = False
    parallel: int = 1
    tools: bool = False
    namespaces: bool = False
    freeform_tools: bool = False
    builtin_tools: bool = False
    response_format: bool = False
    tool_choice: bool = False
    penalties: bool = False
    logit_bias: bool = False
    attachments: bool = False
    keep_conversations: bool = False
    tokenizer: bool = False


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
    # Speculative decoding: tokens drafted, and how many of them the model kept.
    draft_tokens: int = 0
    accepted_tokens: int = 0


class Reply(Iterator[Event]):
    """One reply: iterating it gives its events as they come; `stats` is set once it ends.

    Backends build it around a generator that yields events and returns the `Stats`, so the
    figures never travel inside the event stream.
    """

    def __init__(self, events: Generator[Event, None, Stats]) -> None:
        self._events = events
        self.stats: Stats | None = None

    def __iter__(self) -> Reply:
        return self

    def __next__(self) -> Event:
        try:
            return next(self._events)
        except StopIteration as ended:
            self.stats = ended.value
            raise

    def drain(self) -> tuple[list[Event], Stats]:
        """Run the reply to its end; returns the events not yet taken, and the stats."""
        events = list(self)
        assert self.stats is not None  # set by the StopIteration that ended the loop
        return events, self.stats

    def close(self) -> None:
        """Stop early (the backend's clean-up runs; `stats` stays None)."""
        self._events.close()


@dataclass(frozen=True)
class BackendInfo:
    """What is loaded and where, for status lines. `shared`: a client of the machine's shared
    engine (its placement says where; a narrow status bar says only that much)."""

    backend: str
    model: str
    placement: str
    context_size: int
    details: dict[str, str] = field(default_factory=dict)
    shared: bool = False


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
    "unsupported",  # the request asks what the engine cannot do (`check_request`), or a
    # caller what its capabilities leave out (`no_tokenizer`)
]


class BackendError(UserError):
    """A backend failure with a message for the user; `hint` says what to do, `kind` what broke
    (so callers can react, e.g. offer a smaller plan after "out_of_memory")."""

    def __init__(
        self, message: str, hint: str | None = None, kind: BackendErrorKind = "error"
    ) -> None:
        super().__init__(message, hint)
        self.kind: BackendErrorKind = kind


class UnsupportedRequest(BackendError):
    """A request asks what the engine cannot do; `field` names the part of the request
    ("tools", "builtin_tools", "response_format", "tool_choice", "penalties", "logit_bias",
    "attachments")."""

    def __init__(self, message: str, hint: str, field_name: str) -> None:
        super().__init__(message, hint, kind="unsupported")
        self.field = field_name


def check_request(capabilities: Capabilities, request: ReplyRequest, engine: str = "") -> None:
    """Refuse a request that asks what an engine with `capabilities` cannot do, rather than
    let the engine drop it in silence. `engine` names it in the message ("llamacpp").

    Raises:
        UnsupportedRequest: naming the first thing asked that the engine does not honour.
    """
    c, conversation = capabilities, request.conversation
    wanted = (
        ("tools", "offer function tools", bool(conversation.tools) and not c.tools),
        ("tools", "offer tools in namespaces of their own",
         any(t.namespace != FUNCTIONS for t in conversation.tools) and not c.namespaces),
        ("tools", "offer freeform tools (raw text input, not JSON)",
         any(t.text_input is not None for t in conversation.tools) and not c.freeform_tools),
        ("builtin_tools", "offer built-in tools (python)",
         bool(conversation.builtin_tools) and not c.builtin_tools),
        ("builtin_tools", "offer the built-in browser (a namespace of functions)",
         any(b.functions for b in conversation.builtin_tools) and not c.namespaces),
        ("response_format", "hold a reply to a response format",
         request.response_format is not None and not c.response_format),
        ("tool_choice", "make the model call a tool",
         request.tool_choice.forced and not c.tool_choice),
        ("penalties", "apply frequency or presence penalties",
         bool(request.settings.frequency_penalty or request.settings.presence_penalty)
         and not c.penalties),
        ("logit_bias", "apply logit biases",
         bool(request.settings.logit_bias) and not c.logit_bias),
        ("attachments", "read attached files",
         not c.attachments and any(m.attachments for m in conversation.messages)),
    )  # fmt: skip
    for name, what, refused in wanted:
        if refused:
            who = f"the {engine} engine" if engine else "this engine"
            raise UnsupportedRequest(
                f"{who} cannot {what}", "Leave it out, or use an engine that can.", name
            )


def no_tokenizer(engine: str) -> BackendError:
    """What `count_prompt` and `tokenize` raise on an engine whose `capabilities.tokenizer` is
    False (a caller that did not check it first)."""
    return BackendError(
        f"the {engine} engine keeps its tokenizer to itself",
        "Check capabilities.tokenizer first, and estimate the tokens without it.",
        kind="unsupported",
    )


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

    capabilities: Capabilities

    def stream(self, request: ReplyRequest, cancel: threading.Event | None = None) -> Reply:
        """The assistant's next turn: its events, then its stats (see `Reply`).

        Raises:
            UnsupportedRequest: the request asks what `capabilities` do not offer (at once,
                before any event).
        """
        ...

    def prefill(self, request: ReplyRequest, cancel: threading.Event | None = None) -> int:
        """Evaluate ahead of time what the next turn's prompt will start with (the whole
        conversation so far, as `request` will continue it), so the reply to the user's next
        message starts sooner.

        Called while the user is typing, only when `capabilities.prefill` says it does
        something; `cancel` stops it between batches, keeping what was evaluated. Returns the
        number of tokens evaluated.
        """
        ...

    def keep_conversations(self, max_bytes: int) -> None:
        """Keep up to `max_bytes` of RAM of other conversations' caches (0: none); does
        something only where `capabilities.keep_conversations` says so."""
        ...

    def count_prompt(self, request: ReplyRequest) -> int:
        """The tokens of the prompt `request` would send (its format and tools shown).

        Raises:
            BackendError: `capabilities.tokenizer` is False (callers estimate instead).
        """
        ...

    def tokenize(self, text: str, special: bool = True) -> list[int]:
        """`text` as the model's token ids (`special`: control tokens written in it are read
        as such).

        Raises:
            BackendError: `capabilities.tokenizer` is False (callers estimate instead).
        """
        ...

    def close(self) -> None:
        """Free the model; the backend cannot be used afterwards."""
        ...


@runtime_checkable
class Queued(Protocol):
    """A backend whose replies may wait behind other programs' (a client of a shared engine)."""

    def waiting_for(self) -> str | None:
        """Whose reply this client's request waits behind now (None: it does not wait)."""
        ...

    def engine_alive(self) -> bool:
        """Whether the shared engine still answers (a crashed one is found or started anew)."""
        ...


class ServedElsewhere:
    """What an engine whose model runs in another process (Ollama's daemon, a server reached
    over HTTP) does for `Backend`'s ahead-of-time work: nothing, and it offers no tokenizer
    (its `capabilities.prefill` and `capabilities.tokenizer` are False)."""

    engine: ClassVar[str]  # the engine's name, as errors say it

    def prefill(self, request: ReplyRequest, cancel: threading.Event | None = None) -> int:
        """Nothing to do (`capabilities.prefill` is False)."""
        return 0

    def keep_conversations(self, max_bytes: int) -> None:
        """Nothing to do: the server keeps its own caches."""

    def count_prompt(self, request: ReplyRequest) -> int:
        """Not offered: the server renders and tokenizes the prompt (`capabilities.tokenizer`)."""
        raise no_tokenizer(self.engine)

    def tokenize(self, text: str, special: bool = True) -> list[int]:
        """Not offered: the engine's API has no tokenizer (`capabilities.tokenizer`)."""
        raise no_tokenizer(self.engine)
