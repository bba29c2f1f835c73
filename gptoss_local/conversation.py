"""The conversation: its messages, the tools offered in it, and what a message may carry.

Every layer speaks these types: the history stores them, backends send or render them, the
server reads them from requests, the tool loop appends to them. How a conversation becomes
gpt-oss's prompt text is `harmony`'s business, not theirs: something new on a message (an
attachment, a summary, a citation) is added here, and each renderer decides what it makes of
it. This module imports nothing of the package but `events` (the parsed call a record is made
from, and the events an `AssistantDraft` folds into the assistant's message).

Names of tools and calls must be plain identifiers, and a function may not take the name of
one of gpt-oss's built-in tools: the model addresses tools by these names (``to=functions.NAME``),
whichever engine renders the prompt (the server gives a client's other names identifiers in their
place, `harmony.names`). The built-in browser is a namespace of its own
(``to=browser.search``), so its calls are the only ones recorded in a built-in's namespace.
A tool takes a JSON object (`parameters`) or, freeform, raw text (`text_input`: Codex's
``apply_patch`` takes a patch).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from gptoss_local.events import (
    TEXT_EVENTS,
    Event,
    ReasoningDelta,
    ToolCall,
    TurnEnded,
    TurnEndReason,
)

# gpt-oss was trained with built-in tools of these names; a function of the same name makes
# the model address the built-in (to=python) instead of ours.
RESERVED_TOOL_NAMES: frozenset[str] = frozenset({"python", "browser"})
# The built-ins gptoss-local can offer: python, and the browser over the user's own folders.
BUILTIN_TOOL_NAMES: frozenset[str] = frozenset({"python", "browser"})
# Built-ins that are namespaces of functions (``browser.search``), not one tool taking code.
BUILTIN_NAMESPACES: frozenset[str] = frozenset({"browser"})
# The namespace of function tools; tools may also come in namespaces of their own.
FUNCTIONS = "functions"
# Where a call is written, and so where its answer goes back.
CALL_CHANNELS = ("analysis", "commentary")
# What a freeform tool's text may be: any text, or text in a grammar of one of these languages.
TEXT_SYNTAXES = ("text", "lark", "regex")
Role = Literal["user", "assistant", "tool"]
_ROLES = ("user", "assistant", "tool")
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# What a model turn is laid out in: runs of reasoning, runs of content (answer and preamble
# text), and calls, in the order the model wrote them.
DraftPart = Literal["reasoning", "content", "call"]


def is_identifier(name: str) -> bool:
    """Whether `name` can name a tool in the prompt: ``[A-Za-z_][A-Za-z0-9_]*`` (a client's
    other names get one that can, `harmony.names`)."""
    return isinstance(name, str) and _NAME_RE.fullmatch(name) is not None


def _check_name(name: str, what: str) -> None:
    """Refuse a tool or call name that is not a plain identifier (`what`: for the message).

    Raises:
        ValueError: `name` is not ``[A-Za-z_][A-Za-z0-9_]*``.
    """
    if not is_identifier(name):
        raise ValueError(f"{what} name {name!r} must be an identifier ([A-Za-z_][A-Za-z0-9_]*)")


def _check_namespace(namespace: str, *, builtin_ok: bool = False) -> None:
    """Refuse a namespace that is not an identifier or is a built-in tool's (unless
    `builtin_ok`: a call of the built-in browser is recorded in its namespace)."""
    _check_name(namespace, "namespace")
    if builtin_ok and namespace in BUILTIN_NAMESPACES:
        return
    if namespace.lower() in RESERVED_TOOL_NAMES:
        raise ValueError(f"namespace {namespace!r} collides with gpt-oss's built-in "
                         f"{namespace.lower()!r} tool")  # fmt: skip


def split_recipient(recipient: str) -> tuple[str, str]:
    """The namespace and the tool's name of a call's recipient (``multi_agent.spawn`` ->
    ``("multi_agent", "spawn")``); a bare name is a function's."""
    namespace, dot, name = recipient.partition(".")
    return (namespace, name) if dot else (FUNCTIONS, recipient)


def answered_name(call_name: str) -> str:
    """The `Message.tool_name` of a call's result: the tool's name without its namespace
    (``browser.search`` -> ``search``), as the renderer matches results to calls."""
    return split_recipient(call_name)[1]


@dataclass(frozen=True)
class TextInput:
    """What a freeform tool takes: raw text, not a JSON object. `syntax`: "text" (any text),
    or the language of the grammar `definition` ("lark", "regex") the text should follow.

    The grammar is shown to the model, not enforced while it writes: the tool checks its input
    (Codex checks a patch itself and tells the model what is wrong).
    """

    syntax: str = "text"
    definition: str = ""

    def __post_init__(self) -> None:
        if self.syntax not in TEXT_SYNTAXES:
            known = ", ".join(TEXT_SYNTAXES)
            raise ValueError(f"a tool's text syntax must be one of {known}, not {self.syntax!r}")
        if self.syntax != "text" and not self.definition:
            raise ValueError(f"a {self.syntax} grammar needs its definition")
        if self.syntax == "text" and self.definition:
            raise ValueError("plain text input has no grammar definition")


@dataclass(frozen=True)
class Tool:
    """A function the model may call; `parameters` is a JSON schema of its argument object,
    or, for a freeform tool, `text_input` says what text it takes (and it has no parameters).

    `namespace`: where the model finds it (``functions``, or a namespace of its own, which
    the model calls as ``NAMESPACE.NAME``); `namespace_description` describes that namespace
    (the first tool of a namespace that has one gives it).
    """

    name: str
    description: str = ""
    parameters: dict[str, Any] | None = None
    namespace: str = FUNCTIONS
    namespace_description: str = ""
    text_input: TextInput | None = None

    def __post_init__(self) -> None:
        _check_name(self.name, "tool")
        _check_namespace(self.namespace)
        if self.text_input is not None and self.parameters is not None:
            raise ValueError(f"tool {self.name!r} takes text, so it has no parameters")
        if self.name.lower() in RESERVED_TOOL_NAMES:
            raise ValueError(
                f"tool name {self.name!r} collides with gpt-oss's built-in "
                f"{self.name.lower()!r} tool; choose another name, e.g. 'run_{self.name.lower()}'"
            )


@dataclass(frozen=True)
class BuiltinTool:
    """A tool gpt-oss was trained with, described in the system message: python, which the
    model calls by its bare name (``to=python``) with code; or the browser, a namespace whose
    `functions` it calls as ``browser.search`` (their `namespace` is not read: the built-in's
    name is theirs)."""

    name: str
    description: str
    functions: tuple[Tool, ...] = ()

    def __post_init__(self) -> None:
        if self.name not in BUILTIN_TOOL_NAMES:
            known = ", ".join(sorted(BUILTIN_TOOL_NAMES))
            raise ValueError(f"no built-in tool {self.name!r}; gptoss-local offers: {known}")
        object.__setattr__(self, "functions", tuple(self.functions))
        if bool(self.functions) != (self.name in BUILTIN_NAMESPACES):
            raise ValueError(f"the built-in {self.name!r} is a namespace of functions only "
                             "if it is the browser")  # fmt: skip


@dataclass(frozen=True)
class ToolCallRecord:
    """A tool call the assistant made earlier; `arguments` as a dict or the raw JSON text
    (for ``python``, the code as text or ``{"code": ...}``). `channel`: where it was written,
    which is also where its answer goes; `namespace`: the called tool's (a built-in's is
    ``functions`` too, and not written)."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    channel: str = "commentary"
    namespace: str = FUNCTIONS

    def __post_init__(self) -> None:
        _check_name(self.name, "tool call")
        _check_namespace(self.namespace, builtin_ok=True)
        if self.channel not in CALL_CHANNELS:
            raise ValueError(
                f"a tool call's channel must be analysis or commentary, not {self.channel!r}"
            )


@dataclass(frozen=True)
class Attachment:
    """A file that goes with a message (as simonw/llm's `Attachment`): its bytes, or the path
    where they are, and for a text file its text.

    Nothing renders attachments yet: an engine says whether it takes them in
    `Capabilities.attachments`, and the Harmony renderer refuses a message that has any.

    Attributes:
        name: The file's name as the user knows it ("notes.md").
        media_type: Its MIME type ("text/markdown", "image/png").
        data: Its bytes, when they are held here.
        path: Where its bytes are, when they are not.
        text: The text of a text file, decoded.
    """

    name: str
    media_type: str
    data: bytes | None = None
    path: Path | None = None
    text: str | None = None

    def __post_init__(self) -> None:
        if self.data is not None and self.path is not None:
            raise ValueError(f"attachment {self.name!r}: give its bytes or its path, not both")
        if self.data is None and self.path is None and self.text is None:
            raise ValueError(f"attachment {self.name!r} has no bytes, path or text")


@dataclass(frozen=True)
class Citation:
    """A citation the model wrote after browsing (``【3†L10-L15】``: page 3, its lines 10 to
    15), resolved to the file and the file's own lines it points at.

    Attributes:
        marker: The citation as the model wrote it, to find it in the answer's text.
        path: The file's absolute path.
        name: How the file is named for people (``notes/setup.md``: its folder, then the
            path inside it).
        first_line: The first line cited, counted from 1 in the file (for a PDF or an HTML
            file: in its text as the model read it).
        last_line: The last line cited (equal to `first_line` for one line).
    """

    marker: str
    path: str
    name: str
    first_line: int
    last_line: int

    @property
    def label(self) -> str:
        """``notes/setup.md:10-15`` (``:10`` for one line)."""
        lines = str(self.first_line)
        if self.last_line != self.first_line:
            lines += f"-{self.last_line}"
        return f"{self.name}:{lines}"


def file_link(citation: Citation) -> str:
    """The cited file as a ``file://`` URL (its line in the fragment, as editors read it)."""
    return f"{Path(citation.path).as_uri()}#L{citation.first_line}"


@dataclass(frozen=True)
class Message:
    """One message of the history.

    Assistant messages carry the answer in `content`, chain of thought in `reasoning` and
    calls in `tool_calls` (then `content` is a preamble). Tool messages carry a tool's output;
    `tool_name` defaults to the oldest unanswered call. `attachments`: files that go with it.
    """

    role: Role
    content: str = ""
    reasoning: str = ""
    tool_calls: tuple[ToolCallRecord, ...] = ()
    tool_name: str | None = None
    attachments: tuple[Attachment, ...] = ()

    def __post_init__(self) -> None:
        if self.role not in _ROLES:
            raise ValueError(f"message role {self.role!r} must be one of {', '.join(_ROLES)}")
        object.__setattr__(self, "tool_calls", tuple(self.tool_calls))
        object.__setattr__(self, "attachments", tuple(self.attachments))
        if self.tool_name is not None:
            _check_name(self.tool_name, "tool")


@dataclass(frozen=True)
class Conversation:
    """Everything the model sees: history, the user's instructions, tools, and the date.

    The tools and their kinds: `tools` are functions (``functions.NAME``); `builtin_tools`
    the built-ins gpt-oss was trained with (the python tool), described in the system message.
    """

    messages: tuple[Message, ...]
    instructions: str | None = None
    tools: tuple[Tool, ...] = ()
    current_date: dt.date | None = None
    builtin_tools: tuple[BuiltinTool, ...] = ()


def call_record(call: ToolCall) -> ToolCallRecord | None:
    """The call as it goes back into the conversation, or None when its name cannot be a
    tool's (the model addressed something that is none, e.g. ``web.run.search``): no tool
    could have answered it, so the model loses nothing when it is left out.

    Arguments that did not parse go back as the model wrote them; a call on an odd channel
    goes back where function calls belong.
    """
    channel = call.channel if call.channel in CALL_CHANNELS else "commentary"
    namespace, name = split_recipient(call.name)
    try:
        arguments = call.raw if call.error else call.arguments
        return ToolCallRecord(name, arguments, channel, namespace)
    except ValueError:
        return None


class AssistantDraft:
    """The assistant message a model turn writes, folded from its events as they stream.

    Reasoning deltas make `reasoning`, answer and preamble deltas `content`; `calls` keeps the
    calls as the model wrote them (`message` turns them into records), and `ended` is the
    turn's end reason once `TurnEnded` came. The tool loop and the server's replies in both
    APIs fold their turns here.
    """

    def __init__(self) -> None:
        self._reasoning: list[str] = []
        self._content: list[str] = []
        self.calls: list[ToolCall] = []
        self.ended: TurnEndReason | None = None
        self._part: DraftPart | None = None

    def add(self, event: Event) -> DraftPart | None:
        """Fold in one event.

        Returns:
            The part of the turn it begins, for readers that lay the turn out in order: a
            call, or text of another kind than the text just before it; None when it goes
            on with the part before it, or ends the turn.
        """
        part: DraftPart
        if isinstance(event, ReasoningDelta):
            part = "reasoning"
            self._reasoning.append(event.text)
        elif isinstance(event, TEXT_EVENTS):  # the answer, or a preamble
            part = "content"
            self._content.append(event.text)
        elif isinstance(event, ToolCall):
            part = "call"
            self.calls.append(event)
        else:
            if isinstance(event, TurnEnded):
                self.ended = event.reason
            return None
        begun = part == "call" or part != self._part
        self._part = part
        return part if begun else None

    @property
    def reasoning(self) -> str:
        """The chain of thought so far."""
        return "".join(self._reasoning)

    @property
    def content(self) -> str:
        """The answer (and any preamble) so far."""
        return "".join(self._content)

    def message(self) -> Message:
        """The assistant message as it goes into the conversation: calls no tool could answer
        are left out (see `call_record`)."""
        found = (call_record(call) for call in self.calls)
        records = tuple(record for record in found if record is not None)
        return Message("assistant", self.content, self.reasoning, records)
