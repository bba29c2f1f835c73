"""Streaming parser for gpt-oss output in the Harmony format.

Input is the completion as text with control tokens written out (``<|channel|>`` ...), fed
in chunks of any size; the prompt ended with ``<|start|>assistant``, so the first header
usually starts with ``<|channel|>``. Output is a list of `gptoss_local.events` per chunk.

Guarantees: text deltas stream as soon as they are known not to be part of a marker; no
control token, or any piece of one, ever appears in delta text; the merged events do not
depend on how the input was chunked; malformed output never raises. Text whose purpose is
unclear becomes reasoning, never answer.
"""

from __future__ import annotations

import codecs
import json
import re

from gptoss_local.events import (
    AnswerDelta,
    Event,
    PreambleDelta,
    ReasoningDelta,
    ToolCall,
    TurnEnded,
    merge_events,
)
from gptoss_local.harmony.neutralise import WORD_JOINER, find_control_token, partial_token_start

START, END, MESSAGE, CHANNEL, CONSTRAIN = (
    "<|start|>",
    "<|end|>",
    "<|message|>",
    "<|channel|>",
    "<|constrain|>",
)
_STOPS = ("<|return|>", "<|call|>", "<|endoftext|>")

# Header text that leaked into content: what a model writes when it skips <|channel|>, and
# what is left when a backend strips the control tokens ("...<|end|><|start|>assistant
# <|channel|>final<|message|>..." becomes "...assistantfinal..."). Looked for only where a
# header can be: at the start of a header, and inside a message that was itself opened by
# such a word (a stream without markers has no other boundaries). Inside a message opened by
# a real header they are words like any other: reasoning never becomes answer text.
_LEAKS = {
    "assistantfinal": "answer",
    "assistantanalysis": "reasoning",
    "assistantcommentary": "preamble",
}
_LEAK_RE = re.compile("|".join(_LEAKS))
_LONGEST_LEAK = max(map(len, _LEAKS))
_RECIPIENT_RE = re.compile(r"to=([^\s<]+)")
_CHANNEL_WORD_RE = re.compile(r"[^\s<]*")
_KNOWN_CHANNEL_RE = re.compile(r"analysis|final|commentary")
# Not followed by a lower-case letter: "finally" at the start of a stream is a word.
_LEAKED_CHANNEL_RE = re.compile(r"\s*(?:assistant)?(analysis|final|commentary)(?![a-z])")
_EMPTY_ROLE_RE = re.compile(r"\s*(?:assistant)?\s*")
# What may precede <|channel|>: nothing, the role, a recipient. Bounded so that the verdict on
# a header cut short is already known when the cut happens (see _HEADER_LIMIT).
_ROLE_PART_RE = re.compile(r"\s*(?:assistant)?(?:\s{0,4}to=[^\s<]{1,64})?\s{0,4}")
_HEADER_TAIL_RE = re.compile(
    r"<\|channel\|>[^\s<]*(?:\s*(?:to=[^\s<]*|<\|constrain\|>[^\s<]*|j(?:s(?:o(?:n)?)?)?))*\s*"
)
_OTHER_ROLES = frozenset({"system", "developer", "user", "tool", "python"})
_KINDS = {"final": "answer", "commentary": "preamble", "analysis": "reasoning"}
_DELTAS: dict[str, type[ReasoningDelta | AnswerDelta | PreambleDelta]] = {
    "reasoning": ReasoningDelta,
    "answer": AnswerDelta,
    "preamble": PreambleDelta,
}
# A real header is one short line; past this many characters, or past a line break, it is
# text written without a header.
_HEADER_LIMIT = 256


class HarmonyStreamParser:
    """Turns one assistant turn of Harmony text into events, chunk by chunk."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending = ""  # input not yet decided (could still become a marker)
        self._mode = "header"  # "header", "content" or "done"
        self._header = ""  # header so far, with <|channel|>/<|constrain|> kept as text
        self._idle = False  # between messages (after <|end|>), not inside one
        self._kind = "reasoning"  # what the open message's text is: reasoning/answer/...
        self._stripped = False  # the open message began with a leaked header word
        self._recipient: str | None = None
        self._raw: list[str] = []  # tool-call arguments collected so far
        self._finished = False
        self._tails: dict[str, str] = {}  # last text emitted per delta kind
        self._seams: set[str] = set()  # kinds whose next text needs a leading word joiner

    @property
    def content_kind(self) -> str | None:
        """What the message being read is ("reasoning", "answer", "preamble", "tool"); None
        while a header is read or between messages."""
        return self._kind if self._mode == "content" else None

    def feed(self, chunk: str | bytes) -> list[Event]:
        """Consume the next piece of output.

        Args:
            chunk: Text, or UTF-8 bytes (a character may be split across chunks).

        Returns:
            Events that became certain with this chunk.
        """
        if isinstance(chunk, bytes):
            text = self._decoder.decode(chunk)
        else:  # flush bytes left over from an earlier bytes chunk first
            text = self._decoder.decode(b"", final=True) + chunk
        if self._finished or self._mode == "done":
            return []
        self._pending += text
        return self._drain(eof=False)

    def finish(self) -> list[Event]:
        """Signal the end of output and return the remaining events, ending with `TurnEnded`.

        Returns:
            The last events; empty if the turn already ended or finish was called before.
        """
        if self._finished:
            return []
        self._finished = True
        self._pending += self._decoder.decode(b"", final=True)
        if self._mode == "done":
            return []
        # A marker cut off by the end of output is not text the model meant to write.
        cut = partial_token_start(self._pending, opener_only=True)
        self._pending = self._pending if cut is None else self._pending[:cut]
        out = self._drain(eof=True)
        if self._mode == "header" and self._has_garbage() and not _unfinished(self._header):
            self._recover("")
            out += self._drain(eof=True)
        if self._mode == "content":
            if self._kind == "tool":
                out.append(_tool_call(self._recipient or "", "".join(self._raw), cut=True))
            out.append(TurnEnded("truncated"))
        elif self._mode == "header":
            out.append(TurnEnded("end_of_stream" if self._idle else "truncated"))
        self._mode = "done"
        return out

    # -- scanning ------------------------------------------------------------------------

    def _drain(self, *, eof: bool) -> list[Event]:
        out: list[Event] = []
        while self._pending and self._mode != "done":
            leaks = self._mode == "content" and self._kind == "reasoning" and self._stripped
            start, end, token = _next_token(self._pending, leaks=leaks, eof=eof)
            if start > 0:  # text first; it may change the mode, so scan again after it
                text, self._pending = self._pending[:start], self._pending[start:]
                self._on_text(text, out)
            elif token is None:
                break  # all that is left might still become a marker
            else:
                self._pending = self._pending[end:]
                self._on_token(token, out)
        return out

    def _on_text(self, text: str, out: list[Event]) -> None:
        if self._mode == "content":
            if self._kind == "tool":
                self._raw.append(text)
            else:
                self._emit(self._kind, text, out)
            return
        self._header += text
        body = self._header.lstrip()
        # Wait while a channel name may still be growing, so the verdict never depends on
        # where the input happened to be cut.
        if (len(body) > _HEADER_LIMIT or "\n" in body.rstrip()) and not _channel_growing(body):
            self._recover("")

    def _mark_seams(self) -> None:
        # Text on both sides of consumed input could join into a control token once a UI
        # concatenates the deltas ("a<|e" + <|message|> + "nd|>"): mark the seam for a joiner.
        self._seams.update(k for k, t in self._tails.items() if partial_token_start(t) is not None)

    def _on_token(self, token: str, out: list[Event]) -> None:
        self._mark_seams()
        if token in _LEAKS:
            self._kind = _LEAKS[token]
        elif self._mode == "content":
            self._content_token(token, out)
        else:
            self._header_token(token, out)

    def _content_token(self, token: str, out: list[Event]) -> None:
        # A header marker inside content means the model began a new message without
        # closing this one: close it implicitly. Other markers are dropped.
        if token in _STOPS:
            called = self._end_message(out)
            out.append(TurnEnded("call" if called else "return"))
            self._mode = "done"
        elif token in (END, START, CHANNEL):
            self._end_message(out)
            self._idle = token == END
            self._header = CHANNEL if token == CHANNEL else ""

    def _header_token(self, token: str, out: list[Event]) -> None:
        if token in (CHANNEL, CONSTRAIN):
            self._header += token
        elif token == MESSAGE:
            self._open_message(out)
        elif token in (START, END) or token in _STOPS:
            if self._has_garbage():
                self._recover(token)  # the header was text; let the content rules see token
                return
            self._header = ""
            self._idle = token == END
            if token in _STOPS:
                out.append(TurnEnded("return"))
                self._mode = "done"

    # -- messages ------------------------------------------------------------------------

    def _open_message(self, out: list[Event]) -> None:
        head = self._header
        idx = head.find(CHANNEL)
        role_part = head if idx < 0 else head[:idx]
        channel = None
        if idx >= 0 and (word := _CHANNEL_WORD_RE.match(head, idx + len(CHANNEL))):
            channel = word.group()
        words = _strip_markers(role_part).split()
        role = words[0] if words and not words[0].startswith("to=") else ""
        leaked = _LEAKED_CHANNEL_RE.fullmatch(role)
        if channel is None and leaked:  # "assistantfinal", or a bare "final"
            channel, role = leaked.group(1), "assistant"
        elif channel is None and len(words) > 1 and words[1] in _KINDS:  # "assistant final"
            channel = words[1]
        found = _RECIPIENT_RE.search(head)
        recipient = found.group(1) if found else None
        if recipient in ("assistant", "all", "user"):
            recipient = None
        if role in _OTHER_ROLES or "." in role:  # the model imitating another author
            kind, recipient = "reasoning", None
        else:
            if role not in ("", "assistant"):  # text before the header: keep it, as reasoning
                self._emit("reasoning", _strip_markers(role_part), out)
                self._mark_seams()
            kind = "tool" if recipient else _KINDS.get(channel or "", "reasoning")
        self._begin(kind, recipient)

    def _emit(self, kind: str, text: str, out: list[Event]) -> None:
        if kind in self._seams:
            text = WORD_JOINER + text
            self._seams.discard(kind)
        self._tails[kind] = (self._tails.get(kind, "") + text)[-32:]
        out.append(_DELTAS[kind](text))

    def _begin(self, kind: str, recipient: str | None, *, stripped: bool = False) -> None:
        self._mode, self._kind, self._recipient = "content", kind, recipient
        self._stripped = stripped
        self._header, self._raw, self._idle = "", [], False

    def _end_message(self, out: list[Event]) -> bool:
        """Close the open message; True when it was a tool call."""
        called = self._kind == "tool"
        if called:
            out.append(_tool_call(self._recipient or "", "".join(self._raw)))
        self._mode, self._kind, self._recipient, self._raw = "header", "reasoning", None, []
        return called

    def _has_garbage(self) -> bool:
        return _EMPTY_ROLE_RE.fullmatch(_strip_markers(self._header)) is None

    def _recover(self, token: str) -> None:
        """Treat a header that never reached <|message|> as message text.

        Only a clear channel (``<|channel|>final``, a leading ``final`` or ``assistantfinal``)
        makes it an answer; anything else is reasoning.
        """
        head, kind, used, stripped = self._header, "reasoning", 0, False
        idx = head.find(CHANNEL)
        if idx >= 0 and _ROLE_PART_RE.fullmatch(head, 0, idx):
            used = idx + len(CHANNEL)
            known = _KNOWN_CHANNEL_RE.match(head, used)
            if known:
                kind, used = ("answer" if known.group() == "final" else "reasoning"), known.end()
        elif idx < 0 and (leaked := _LEAKED_CHANNEL_RE.match(head)):
            kind = "answer" if leaked.group(1) == "final" else "reasoning"
            used, stripped = leaked.end(), True
        self._begin(kind, None, stripped=stripped)
        self._pending = head[used:] + token + self._pending


def _next_token(buf: str, *, leaks: bool, eof: bool) -> tuple[int, int, str | None]:
    """Find the first token (control marker, or leaked header word when `leaks`).

    Returns:
        ``(start, end, token)``. When no complete token is found, token is None and
        ``buf[start:]`` is a suffix that could still grow into one (empty at eof).
    """
    leak = _LEAK_RE.search(buf) if leaks else None
    found = [m for m in (find_control_token(buf), leak) if m]
    if found:
        first = min(found, key=lambda m: m.start())
        return first.start(), first.end(), first.group()
    if eof:
        return len(buf), len(buf), None
    partial = partial_token_start(buf)
    hold = len(buf) if partial is None else partial
    if leaks:
        for size in range(min(len(buf), _LONGEST_LEAK - 1), 0, -1):
            if any(word.startswith(buf[-size:]) for word in _LEAKS):
                hold = min(hold, len(buf) - size)
                break
    return hold, hold, None


def _channel_growing(head: str) -> bool:
    """True when the header ends in ``<|channel|>`` plus the start of a channel name."""
    idx = head.rfind(CHANNEL)
    word = head[idx + len(CHANNEL) :] if idx >= 0 else None
    return word is not None and any(n.startswith(word) and n != word for n in _KINDS)


def _unfinished(head: str) -> bool:
    """Tell a header cut off by the end of output (``assistant<|channel|>fin``) from text."""
    if "\n" in head.strip():
        return False
    idx = head.find(CHANNEL)
    role_part = head if idx < 0 else head[:idx]
    if not (_ROLE_PART_RE.fullmatch(role_part) or "assistant".startswith(role_part.strip())):
        return False
    return idx < 0 or _HEADER_TAIL_RE.fullmatch(head, idx) is not None


def _strip_markers(text: str) -> str:
    return text.replace(CHANNEL, " ").replace(CONSTRAIN, " ")


def _tool_call(recipient: str, raw: str, *, cut: bool = False) -> ToolCall:
    name = recipient.removeprefix("functions.")
    if cut:
        return ToolCall(name, {}, raw, "output ended before the tool call was complete")
    if not raw.strip():
        return ToolCall(name, {}, raw)  # a call without arguments
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return ToolCall(name, {}, raw, f"arguments are not valid JSON: {exc}")
    if not isinstance(value, dict):
        return ToolCall(name, {}, raw, "arguments are not a JSON object")
    return ToolCall(name, value, raw)


def parse_completion(text: str | bytes) -> list[Event]:
    """Parse a whole completion at once.

    Args:
        text: The complete output of one turn.

    Returns:
        Its events with adjacent deltas of the same kind merged.
    """
    parser = HarmonyStreamParser()
    return merge_events(parser.feed(text) + parser.finish())
