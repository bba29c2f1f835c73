"""Harmony's control-token strings, and making untrusted text unable to produce them.

llama.cpp matches the text of gpt-oss's special tokens (`<|start|>`, `<|channel|>`, ...)
inside ordinary text even with special-token parsing off. A user message that contains
`<|end|><|start|>system<|message|>` would otherwise close its own message and open a forged
one. Every piece of text we did not write ourselves must go through `neutralise` before it
is placed in a prompt.

Choice of breaker: U+2060 WORD JOINER inserted between `<` and `|`. It is invisible when
shown, has no width, does not allow a line break there (U+200B would), survives copy and
paste as the same visible text, and the model reads `<`, an invisible joiner, then
`|end|>` as plain text. Replacing `|` with a look-alike such as U+FF5C would change what the
user sees and copies; escaping with backslashes or entities would change what the model reads.
"""

from __future__ import annotations

import re

WORD_JOINER = "\u2060"

# The special tokens of o200k_harmony as text. Ids differ between vocabularies, the text
# does not; reserved slots (`<|reserved_200013|>` ...) are matched by pattern below.
CONTROL_TOKENS: frozenset[str] = frozenset(
    {
        "<|startoftext|>",
        "<|endoftext|>",
        "<|return|>",
        "<|constrain|>",
        "<|channel|>",
        "<|start|>",
        "<|end|>",
        "<|message|>",
        "<|call|>",
        "<|endofprompt|>",
    }
)
_RESERVED_RE = re.compile(r"<\|reserved_\d+\|>")

# Any `<|name|>` could be a special token of some vocabulary, so every such opener is broken,
# not only the known ones. A `<|` not followed by `name|>` cannot form a token and is left as is.
_OPENER_RE = re.compile(r"<\|(?=[A-Za-z0-9_]+\|>)")


_TOKEN_RE = re.compile(r"<\|[A-Za-z0-9_]{1,24}\|>")
_PARTIAL_RE = re.compile(r"<(?:\|(?:[A-Za-z0-9_]{1,24}\|?)?)?\Z")


def find_control_token(text: str) -> re.Match[str] | None:
    """Find the first control token in `text`; other ``<|name|>`` sequences are plain text.

    Args:
        text: Text to search.

    Returns:
        The match of the first known control token, or None.
    """
    found = _TOKEN_RE.search(text)
    while found and not is_control_token(found.group()):
        found = _TOKEN_RE.search(text, found.start() + 1)
    return found


def partial_token_start(text: str, *, opener_only: bool = False) -> int | None:
    """Where a control token may be starting at the end of `text` (``<``, ``<|cha``, ...).

    Args:
        text: Text whose end may be cut inside a token.
        opener_only: Ignore a lone trailing ``<`` (only ``<|`` and longer count).

    Returns:
        The index of the possible start, or None when the text cannot end inside a token.
    """
    found = _PARTIAL_RE.search(text)
    if found is None or (opener_only and found.end() - found.start() < 2):
        return None
    return found.start()


def is_control_token(text: str) -> bool:
    """Tell whether `text` is exactly one Harmony control token string.

    Args:
        text: Candidate such as ``"<|end|>"``.

    Returns:
        True for the known special tokens and the reserved slots.
    """
    return text in CONTROL_TOKENS or _RESERVED_RE.fullmatch(text) is not None


def neutralise(text: str) -> str:
    """Make `text` safe to embed in a Harmony prompt.

    Inserts a word joiner inside the ``<|`` of every ``<|name|>`` sequence, so no tokenizer
    can match a control token in it. Text without such sequences is returned unchanged, and
    applying it twice gives the same result as once.

    Args:
        text: Untrusted text (user input, instructions, tool output, past answers).

    Returns:
        The text with every control-token look-alike broken.
    """
    if "<|" not in text:
        return text
    return _OPENER_RE.sub("<" + WORD_JOINER + "|", text)
