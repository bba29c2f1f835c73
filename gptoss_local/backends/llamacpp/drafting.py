"""Draft tokens for speculative decoding, from text the context already holds (n-gram lookup).

A reply often repeats what is in its prompt or in itself: code being edited, names, quoted
documents, JSON keys, the Harmony headers of a tool call. The drafter finds the last time the
newest tokens occurred before and proposes what followed them then; the engine checks all the
drafts with one decode (`token_loop.TokenLoop`), keeping those the model would have sampled
anyway, so a right guess saves a forward pass and a wrong one costs only the wider batch.

No extra model: it needs nothing but the token history. Each n-gram's last position is kept in
a dict, updated as tokens come, so a proposal costs a few dict lookups, not a scan.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

# Matching longer n-grams first: a 4-token match predicts better than a 2-token one.
LONGEST_MATCH = 4
SHORTEST_MATCH = 2
# Only the prompt's newest tokens are indexed: indexing is before the first token (32,768
# tokens took 71 ms on this project's 2-core CPU, 4,096 took 4 ms), and what a reply repeats
# is mostly near its end.
LOOKBACK = 4096
# At most this many drafts per step: verifying more costs a wider batch for guesses that get
# less likely the further they run.
MOST_DRAFTS = 6


# A poor stretch of single drafts (`GOVERNOR_WINDOW` of them) stops drafting for a while: no
# drafts for `FIRST_PAUSE` decodes, twice as long each time it happens again.
GOVERNOR_WINDOW = 16
FIRST_PAUSE, LONGEST_PAUSE = 32, 256
# Drafting samples on the CPU, 13 % slower than in the GPU's graph (the 20b on an H200): over
# each `YIELD_WINDOW` decodes, drafts must save more decodes than that, or drafting has too
# little to predict in this reply (`DraftGovernor.low_yield`).
YIELD_WINDOW, LEAST_YIELD = 64, 0.15


@dataclass
class DraftStats:
    """What the drafter proposed over a reply and how much of it the model kept."""

    drafted: int = 0
    accepted: int = 0
    steps: int = 0  # decodes that carried drafts


class Drafter(Protocol):
    """What the decode loop asks of a drafter (`NgramDrafter`, `eagle_drafting.EagleDrafter`).

    The loop tells it what the target decodes and keeps; a drafter that reads the target's
    hidden states (EAGLE-3) also limits how much of the target's cache a prompt reuses.
    """

    most: int
    stats: DraftStats
    break_even: float  # the share of single drafts that must be kept for drafting to pay
    resumes_after_pause: bool  # drafts again after a pause in the same reply

    def usable_prefix(self, prompt: list[int]) -> int:
        """How many leading tokens of `prompt` the target's cache may keep."""

    def resume(self, kept: int) -> None:
        """The target's cache keeps its first `kept` tokens."""

    def observe(self, tokens: list[int], first: int) -> None:
        """The target decoded prompt `tokens` from position `first`."""

    def begin(self, context: list[int]) -> None:
        """A reply starts after `context` (the tokens the target's cache holds)."""

    def propose(self, token: int, room: int) -> list[int]:
        """Up to `room` drafts to follow `token`, the newest sample (not decoded yet)."""

    def decoded(self, tokens: list[int], first: int) -> None:
        """The target decoded the sample and its drafts, `tokens`, from `first`."""

    def kept(self, length: int) -> None:
        """The target's context holds `length` tokens now (refused drafts dropped)."""

    def finish(self, clean: bool = True) -> None:
        """The reply is over (`clean`: its last decode succeeded and may be read)."""


class DraftGovernor:
    """How many drafts the next decode may carry: checking K drafts costs a decode of 1 + K
    tokens (1.15x one token for K = 1, 2.05x for K = 4 with the 20b on an H200,
    bench/results/gpu/speculative.txt), so K grows while drafts are kept and shrinks when they
    are refused; when even single drafts are kept less often than the drafter's
    `break_even`, drafting pauses.
    """

    def __init__(self, most: int, break_even: float) -> None:
        self.most = most
        self.budget = min(2, most)
        self._break_even = break_even
        self._singles: list[int] = []  # kept (0 or 1) of recent single drafts
        self._pause = 0
        self._next_pause = FIRST_PAUSE
        self.pauses = 0  # pauses begun so far in this reply
        self.low_yield = False  # a window of decodes saved too few decodes to pay
        self._decodes = self._saved = 0

    def allows(self) -> int:
        """The drafts this decode may carry (0 during a pause, which it counts down)."""
        if self._pause > 0:
            self._pause -= 1
            return 0
        return self.budget

    def record(self, drafted: int, kept: int) -> None:
        """A decode carried `drafted` drafts, of which the model kept `kept`."""
        self._decodes, self._saved = self._decodes + 1, self._saved + kept
        if self._decodes >= YIELD_WINDOW:
            self.low_yield = self.low_yield or self._saved < LEAST_YIELD * self._decodes
            self._decodes = self._saved = 0
        if not drafted:
            return
        if kept == drafted:
            self.budget = min(self.budget + 1, self.most)
        else:
            self.budget = max(1, kept + 1 if kept else self.budget // 2)
        if drafted > 1:
            return
        self._singles.append(kept)
        if len(self._singles) < GOVERNOR_WINDOW:
            return
        rate = sum(self._singles) / len(self._singles)
        self._singles = []
        if rate < self._break_even:
            self._pause, self._next_pause = (
                self._next_pause,
                min(2 * self._next_pause, LONGEST_PAUSE),
            )
            self.pauses += 1
        else:
            self._next_pause = FIRST_PAUSE


class NgramDrafter:
    """Proposes the tokens that followed the last earlier occurrence of the newest n-gram."""

    # A refused single draft costs 0.15 of a decode (the wider batch) on an H200.
    break_even = 0.2
    resumes_after_pause = True

    def __init__(self, most: int = MOST_DRAFTS) -> None:
        self.most = most
        self.stats = DraftStats()
        self._tokens: list[int] = []
        self._seen: list[dict[tuple[int, ...], int]] = [
            {} for _ in range(LONGEST_MATCH + 1)
        ]  # n → n-gram → index just after its last occurrence
        self._decoded: list[int] = []
        self._first = 0

    # The loop's side (`Drafter`): the index follows the tokens the context takes.

    def usable_prefix(self, prompt: list[int]) -> int:
        return len(prompt)  # no state in the target's cache

    def resume(self, kept: int) -> None:
        pass

    def observe(self, tokens: list[int], first: int) -> None:
        pass

    def begin(self, context: list[int]) -> None:
        self.reset(context)

    def propose(self, token: int, room: int) -> list[int]:
        self.extend([token])
        return self.proposal(room)

    def decoded(self, tokens: list[int], first: int) -> None:
        self._decoded, self._first = tokens, first

    def kept(self, length: int) -> None:
        self.extend(self._decoded[1 : length - self._first])  # the sample went in `propose`
        self._decoded = []

    def finish(self, clean: bool = True) -> None:
        pass

    def reset(self, tokens: Sequence[int]) -> None:
        """Start from the context's `tokens` (the prompt), indexing its newest `LOOKBACK`."""
        self._tokens = []
        self._seen = [{} for _ in range(LONGEST_MATCH + 1)]
        self.extend(tokens[-LOOKBACK:])

    def extend(self, tokens: Sequence[int]) -> None:
        """Take tokens the context now holds."""
        for token in tokens:
            self._tokens.append(token)
            end = len(self._tokens)
            for n in range(SHORTEST_MATCH, LONGEST_MATCH + 1):
                if end > n:  # the n-gram before the newest token, and where it led
                    self._seen[n][tuple(self._tokens[end - 1 - n : end - 1])] = end - 1

    def proposal(self, room: int) -> list[int]:
        """Up to `room` (and `most`) drafts to follow the newest token; [] when its n-grams
        were not seen before."""
        limit = min(room, self.most)
        tokens = self._tokens
        if limit <= 0:
            return []
        for n in range(LONGEST_MATCH, SHORTEST_MATCH - 1, -1):
            if len(tokens) < n:
                continue
            at = self._seen[n].get(tuple(tokens[-n:]))
            if at is not None and at < len(tokens):
                # What followed runs up to the newest token; past it, the same stretch again
                # (a loop, a repeated line: the match was `period` tokens back).
                period = len(tokens) - at
                return [tokens[at + i % period] for i in range(limit)]
        return []
