"""The model summarises the oldest turns of a chat, so the chat goes on past its context.

The turns are shown to the model as a transcript inside one user message, with instructions
to write the summary it will go on from (what the user wants, what was decided, facts, files
and names, what is left to do). A transcript longer than the model's window is summarised in
parts, each part's summary carried into the next. Reasoning is not in the transcript: gpt-oss
drops earlier turns' reasoning from its prompts itself. The summary is asked for at low effort:
it costs a fraction of a reply, and its cost is reported (`Summary`'s seconds and tokens).

A model that writes no answer (it reasoned until the token limit) gives an empty summary; the
caller then leaves the turns out without one and says so, rather than failing the user's message.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

from gptoss_local.backends.base import Backend, GenerationSettings, ReplyRequest
from gptoss_local.chat.context_budget import Counter
from gptoss_local.conversation import Conversation, Message
from gptoss_local.events import AnswerDelta

SUMMARY_INSTRUCTIONS = (
    "You are compacting a long conversation so it can go on in a smaller space. Write the "
    "summary you will continue from: the user's goals and preferences, what was asked and "
    "answered, decisions, facts, numbers, names of files and functions, code that matters, "
    "and what is still open. Be concise and concrete; write it as notes, not as a reply to "
    "the user, in the language of the conversation."
)
_INTRO = "Summarise this part of our conversation (a transcript; the newest turns come later).\n\n"
_EARLIER = "The summary of what came before it:\n{summary}\n\n"
# A tool's output is cut to this many characters in the transcript (its gist is what matters).
TOOL_OUTPUT_CHARS = 2000


@dataclass(frozen=True)
class Summary:
    """The summary text ("" when the model wrote none), and what writing it cost."""

    text: str
    seconds: float
    prompt_tokens: int
    generated_tokens: int
    parts: int


def transcript(messages: Sequence[Message]) -> list[str]:
    """Each message as a transcript entry ("User: …", "Assistant: …", "Tool NAME: …")."""
    entries = []
    for message in messages:
        if message.role == "user":
            entries.append(f"User: {message.content}")
        elif message.role == "tool":
            output = message.content
            if len(output) > TOOL_OUTPUT_CHARS:
                left = len(output) - TOOL_OUTPUT_CHARS
                output = f"{output[:TOOL_OUTPUT_CHARS]}\n[… {left:,} more characters]"
            name = f" {message.tool_name}" if message.tool_name else ""
            entries.append(f"Tool{name}: {output}")
        else:
            calls = "".join(f"\n[called {c.name}({c.arguments})]" for c in message.tool_calls)
            if message.content or calls:
                entries.append(f"Assistant: {message.content}{calls}")
    return entries


def summarise(
    backend: Backend,
    messages: Sequence[Message],
    *,
    window: int,
    max_tokens: int,
    count_text: Counter,
    settings: GenerationSettings | None = None,
    cancel: threading.Event | None = None,
) -> Summary:
    """A summary of `messages` by the model, in parts that each fit `window` tokens.

    Args:
        backend: The loaded model.
        messages: The turns to summarise, oldest first.
        window: The most tokens one summary request may take, prompt and summary together.
        max_tokens: The longest summary (and reasoning) asked for.
        count_text: Counts the prompt of a one-message conversation (for the parts' sizes).
        settings: Sampling settings (the effort is set low, the token limit to `max_tokens`).
        cancel: Stops the summary between tokens; what was written so far is returned.
    """
    started = time.monotonic()
    chosen = replace(settings or GenerationSettings(), effort="low", max_tokens=max_tokens)
    prompt_room = max(window - max_tokens, 1)
    summary, prompt_tokens, generated, parts = "", 0, 0, 0
    pending = transcript(messages)
    while pending and not (cancel is not None and cancel.is_set()):
        part, pending = _next_part(pending, summary, prompt_room, count_text)
        text = _prompt(part, summary)
        request = ReplyRequest(Conversation((Message("user", text),), SUMMARY_INSTRUCTIONS),
                               chosen)  # fmt: skip
        reply = backend.stream(request, cancel)
        events, stats = reply.drain()
        written = "".join(e.text for e in events if isinstance(e, AnswerDelta)).strip()
        prompt_tokens += stats.prompt_tokens
        generated += stats.generated_tokens
        parts += 1
        summary = written or summary  # a part the model left unsummarised keeps the last one
    return Summary(summary, time.monotonic() - started, prompt_tokens, generated, parts)


def _prompt(entries: Sequence[str], summary: str) -> str:
    earlier = _EARLIER.format(summary=summary) if summary else ""
    return _INTRO + earlier + "\n\n".join(entries)


def _next_part(
    entries: list[str], summary: str, room: int, count_text: Counter
) -> tuple[list[str], list[str]]:
    """The longest run of entries from the front whose prompt fits `room` (at least one entry,
    cut in its middle when it alone is too long), and the entries left."""

    def fits(part: Sequence[str]) -> bool:
        return count_text([Message("user", _prompt(part, summary))]) <= room

    taken, high = 1, len(entries)  # the longest fitting run, by binary search
    while taken < high:
        middle = (taken + high + 1) // 2
        if fits(entries[:middle]):
            taken = middle
        else:
            high = middle - 1
    part, rest = entries[:taken], entries[taken:]
    if taken == 1 and not fits(part):
        part = [_shortened(part[0], summary, room, count_text)]
    return part, rest


def _shortened(entry: str, summary: str, room: int, count_text: Counter) -> str:
    """`entry` with its middle left out, halving until its prompt fits `room`."""
    keep = len(entry)
    while keep > 200:
        keep //= 2
        left = len(entry) - keep
        cut = f"{entry[: keep // 2]}\n[… {left:,} characters left out …]\n{entry[-keep // 2 :]}"
        if count_text([Message("user", _prompt([cut], summary))]) <= room:
            return cut
    return entry[:200]
