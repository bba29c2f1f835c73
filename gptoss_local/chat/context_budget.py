"""How much of the context a chat's prompt may take, and what to leave out when it would take more.

A reply needs room after its prompt: reasoning at high effort runs to thousands of tokens, so
the room kept grows with the effort (a quarter of the context at most, so a small context still
takes a prompt). When the prompt would leave less, the chat acts by its `context_policy`:

- "compact": the oldest turns are summarised by the model and the summary stands in for them;
  what is kept is cut to about half of what a prompt may take, so that the next turns do not
  compact again at once;
- "drop_oldest": the oldest turns are left out, as few as make it fit;
- "stop": nothing is left out; the message is not sent and the user is told.

Cuts fall only where a user message starts, so a call and its tool's output stay together, and
never past the newest user message: what the user just wrote always goes in. Everything here is
arithmetic over a token counter the caller gives (`Counter`: the rendered prompt of a list of
messages), so it is the same for every engine and tested without one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gptoss_local.conversation import Message
from gptoss_local.i18n import _
from gptoss_local.kinds import ContextPolicy

# Tokens kept free for the reply (reasoning and answer) by effort, before the quarter cap.
REPLY_ROOM = {"low": 1024, "medium": 2048, "high": 4096}
# The longest summary asked for, before the eighth-of-the-context cap.
SUMMARY_TOKENS = 1024

# The tokens of the prompt made of these messages (with the chat's system and developer
# messages and the tools, as the reply will see them).
Counter = Callable[[Sequence[Message]], int]


@dataclass(frozen=True)
class Budget:
    """The token budget of one reply in a context of `context_size` tokens at `effort`."""

    context_size: int
    effort: str = "medium"

    @property
    def reply_room(self) -> int:
        """Tokens kept free after the prompt for the reply."""
        return min(REPLY_ROOM.get(self.effort, REPLY_ROOM["medium"]), self.context_size // 4)

    @property
    def prompt_limit(self) -> int:
        """The most tokens a prompt may take."""
        return self.context_size - self.reply_room

    @property
    def summary_tokens(self) -> int:
        """The longest summary asked of the model (and the room it takes in the prompt)."""
        return min(SUMMARY_TOKENS, self.context_size // 8)


@dataclass(frozen=True)
class Fit:
    """What to send: the messages from `keep_from` on, after a summary of those before when
    `summarise`; `prompt_tokens` is the prompt as counted without the summary."""

    keep_from: int
    summarise: bool
    prompt_tokens: int

    @property
    def leaves_out(self) -> bool:
        """Whether older messages are left out of the prompt (summarised or dropped)."""
        return self.keep_from > 0


class ContextFull(Exception):
    """The newest user message, with what must go with it, does not fit whatever is left out;
    or the policy is "stop" and the prompt does not fit. The message names the figures."""

    def __init__(self, message: str, needed: int, room: int) -> None:
        super().__init__(message)
        self.needed, self.room = needed, room


def turn_starts(messages: Sequence[Message]) -> list[int]:
    """The indexes where a cut may fall: each user message's, up to and including the newest."""
    return [i for i, message in enumerate(messages) if message.role == "user"]


def fit(messages: Sequence[Message], count: Counter, budget: Budget, policy: ContextPolicy) -> Fit:
    """What of `messages` to send so that the prompt leaves the reply its room.

    Raises:
        ContextFull: nothing the policy may do makes it fit (the user's message stays unsent).
    """
    whole = count(messages)
    if whole <= budget.prompt_limit:
        return Fit(0, False, whole)
    starts = turn_starts(messages)
    newest = starts[-1] if starts else len(messages) - 1
    room = budget.prompt_limit - (budget.summary_tokens if policy == "compact" else 0)
    needed = count(messages[newest:]) if newest > 0 else whole
    if policy == "stop" or needed > room or newest <= 0:
        raise _full(whole if policy == "stop" else needed, budget, policy)
    # Keep as much as fits the target: all of the room when dropping, half when compacting.
    target = room if policy == "drop_oldest" else max(needed, room // 2)
    cut = _first_fitting([i for i in starts if i > 0], messages, count, target)
    keep_from = cut if cut is not None else newest
    return Fit(keep_from, policy == "compact", count(messages[keep_from:]))


def _first_fitting(
    cuts: Sequence[int], messages: Sequence[Message], count: Counter, target: int
) -> int | None:
    """The earliest of `cuts` whose kept messages count `target` tokens or fewer (kept tokens
    only fall as the cut moves later, so a binary search finds it)."""
    low, high, found = 0, len(cuts) - 1, None
    while low <= high:
        middle = (low + high) // 2
        if count(messages[cuts[middle] :]) <= target:
            found, high = cuts[middle], middle - 1
        else:
            low = middle + 1
    return found


def _full(needed: int, budget: Budget, policy: ContextPolicy) -> ContextFull:
    if policy == "stop":
        text = _(
            "The context is full: this chat's prompt would take {needed:,} tokens, and a "
            "{context:,}-token context leaves {room:,} after keeping {reply:,} for the reply "
            '(context_policy is "stop").'
        )
    else:
        text = _(
            "Your message, with what must go with it, is {needed:,} tokens: a {context:,}-token "
            "context leaves {room:,} after keeping {reply:,} for the reply, even with the older "
            "messages left out."
        )
    room = budget.prompt_limit
    message = text.format(needed=needed, context=budget.context_size, room=room,
                          reply=budget.reply_room)  # fmt: skip
    return ContextFull(message, needed, room)
