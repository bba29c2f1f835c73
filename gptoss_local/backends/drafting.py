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


@dataclass
class DraftStats:
    """What the drafter proposed over a reply and how much of it the model kept."""

    drafted: int = 0
    accepted: int = 0
    steps: int = 0  # decodes that carried drafts


class NgramDrafter:
    """Proposes the tokens that followed the last earlier occurrence of the newest n-gram."""

    def __init__(self, most: int = MOST_DRAFTS) -> None:
        self.most = most
        self.stats = DraftStats()
        self._tokens: list[int] = []
        self._seen: list[dict[tuple[int, ...], int]] = [
            {} for _ in range(LONGEST_MATCH + 1)
        ]  # n → n-gram → index just after its last occurrence

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

    def propose(self, room: int) -> list[int]:
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
