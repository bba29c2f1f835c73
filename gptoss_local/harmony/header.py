"""Reading the header of one assistant message (what comes before ``<|message|>``).

A header is kept as text with ``<|channel|>`` and ``<|constrain|>`` written out. When the
input came token by token, ordinary text in it has each ``<`` replaced by `ESCAPED_LT`, so
that only real control tokens can look like markers here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CHANNEL, CONSTRAIN = "<|channel|>", "<|constrain|>"
# Stands for a "<" of ordinary text fed token by token: a lone surrogate never comes out of
# a UTF-8 decoder, so it cannot collide with real text.
ESCAPED_LT = "\udc00"
KINDS = {"final": "answer", "commentary": "preamble", "analysis": "reasoning"}

_RECIPIENT_RE = re.compile(f"to=([^\\s<{ESCAPED_LT}]+)")
_CHANNEL_WORD_RE = re.compile(f"[^\\s<{ESCAPED_LT}]*")
_KNOWN_CHANNEL_RE = re.compile(r"analysis|final|commentary")
# Not followed by a lower-case letter: "finally" at the start of a stream is a word.
LEAKED_CHANNEL_RE = re.compile(r"\s*(?:assistant)?(analysis|final|commentary)(?![a-z])")
_EMPTY_ROLE_RE = re.compile(r"\s*(?:assistant)?\s*")
# What may precede <|channel|>: nothing, the role, a recipient. Bounded so that the verdict on
# a header cut short is already known when the cut happens (see the parser's header limit).
_ROLE_PART_RE = re.compile(r"\s*(?:assistant)?(?:\s{0,4}to=[^\s<]{1,64})?\s{0,4}")
_HEADER_TAIL_RE = re.compile(
    r"<\|channel\|>[^\s<]*(?:\s*(?:to=[^\s<]*|<\|constrain\|>[^\s<]*|j(?:s(?:o(?:n)?)?)?))*\s*"
)
_OTHER_ROLES = frozenset({"system", "developer", "user", "tool", "python"})


@dataclass(frozen=True)
class Header:
    """What a complete header says about its message.

    kind: "reasoning", "answer", "preamble" or "tool". recipient: the tool called, if any.
    before: text the model wrote in front of the header (kept as reasoning). channel: the
    channel named, if any.
    """

    kind: str
    recipient: str | None = None
    before: str = ""
    channel: str | None = None


def read_header(head: str) -> Header:
    """Interpret a header that ended with ``<|message|>``."""
    idx = head.find(CHANNEL)
    role_part = head if idx < 0 else head[:idx]
    channel = None
    if idx >= 0 and (word := _CHANNEL_WORD_RE.match(head, idx + len(CHANNEL))):
        channel = word.group()
    words = strip_markers(role_part).split()
    role = words[0] if words and not words[0].startswith("to=") else ""
    leaked = LEAKED_CHANNEL_RE.fullmatch(role)
    if channel is None and leaked:  # "assistantfinal", or a bare "final"
        channel, role = leaked.group(1), "assistant"
    elif channel is None and len(words) > 1 and words[1] in KINDS:  # "assistant final"
        channel = words[1]
    found = _RECIPIENT_RE.search(head)
    recipient = found.group(1) if found else None
    if recipient in ("assistant", "all", "user"):
        recipient = None
    if role in _OTHER_ROLES or "." in role:  # the model imitating another author
        return Header("reasoning")
    before = strip_markers(role_part) if role not in ("", "assistant") else ""
    kind = "tool" if recipient else KINDS.get(channel or "", "reasoning")
    return Header(kind, recipient, before, channel)


def recover_header(head: str) -> tuple[str, int, bool]:
    """Read a header that never reached ``<|message|>`` as the start of message text.

    Only a clear channel (``<|channel|>final``, a leading ``final`` or ``assistantfinal``)
    makes it an answer; anything else is reasoning.

    Returns:
        ``(kind, used, stripped)``: the message kind, how much of `head` was header, and
        whether that header was a leaked word (the stream's markers were stripped).
    """
    idx = head.find(CHANNEL)
    if idx >= 0 and _ROLE_PART_RE.fullmatch(head, 0, idx):
        used = idx + len(CHANNEL)
        known = _KNOWN_CHANNEL_RE.match(head, used)
        if known:
            return ("answer" if known.group() == "final" else "reasoning"), known.end(), False
        return "reasoning", used, False
    if idx < 0 and (leaked := LEAKED_CHANNEL_RE.match(head)):
        return ("answer" if leaked.group(1) == "final" else "reasoning"), leaked.end(), True
    return "reasoning", 0, False


def has_garbage(head: str) -> bool:
    """Whether the header holds more than the role (text that is not a header)."""
    return _EMPTY_ROLE_RE.fullmatch(strip_markers(head)) is None


def channel_growing(head: str) -> bool:
    """True when the header ends in ``<|channel|>`` plus the start of a channel name."""
    idx = head.rfind(CHANNEL)
    word = head[idx + len(CHANNEL) :] if idx >= 0 else None
    return word is not None and any(n.startswith(word) and n != word for n in KINDS)


def unfinished(head: str) -> bool:
    """Tell a header cut off by the end of output (``assistant<|channel|>fin``) from text."""
    if "\n" in head.strip():
        return False
    idx = head.find(CHANNEL)
    role_part = head if idx < 0 else head[:idx]
    if not (_ROLE_PART_RE.fullmatch(role_part) or "assistant".startswith(role_part.strip())):
        return False
    return idx < 0 or _HEADER_TAIL_RE.fullmatch(head, idx) is not None


def strip_markers(text: str) -> str:
    """The header with its markers turned into spaces."""
    return text.replace(CHANNEL, " ").replace(CONSTRAIN, " ")
