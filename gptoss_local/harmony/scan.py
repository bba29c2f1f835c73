"""Finding the next marker in buffered output: a control token, or a leaked header word."""

from __future__ import annotations

import re

from gptoss_local.harmony.neutralise import find_control_token, partial_token_start

# Header text that leaked into content: what a model writes when it skips <|channel|>, and
# what is left when a backend strips the control tokens ("...<|end|><|start|>assistant
# <|channel|>final<|message|>..." becomes "...assistantfinal..."). The parser looks for
# them only where a header can be: at the start of a header, and inside a message that was
# itself opened by such a word (a stream without markers has no other boundaries). Inside a
# message opened by a real header they are words like any other: reasoning never becomes
# answer text.
LEAKS = {
    "assistantfinal": "answer",
    "assistantanalysis": "reasoning",
    "assistantcommentary": "preamble",
}
_LEAK_RE = re.compile("|".join(LEAKS))
_LONGEST_LEAK = max(map(len, LEAKS))


def next_token(buf: str, *, leaks: bool, eof: bool) -> tuple[int, int, str | None]:
    """Find the first token (control marker, or leaked header word when `leaks`).

    Args:
        buf: Buffered output; ordinary text fed token by token has no ``<`` left in it.
        leaks: Also look for leaked header words.
        eof: No more output follows, so nothing needs holding back.

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
            if any(word.startswith(buf[-size:]) for word in LEAKS):
                hold = min(hold, len(buf) - size)
                break
    return hold, hold, None
