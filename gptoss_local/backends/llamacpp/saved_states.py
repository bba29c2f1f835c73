"""Other conversations' KV caches, kept in RAM so that each keeps its prefix between turns.

A llama.cpp sequence caches one conversation. When `serve` takes turns of more conversations
than it has sequences, each new one would trim away another's cache, and every turn would
evaluate its whole history again. Instead, the cache of the conversation being left is copied to RAM
(`llama_state_seq_get_data`, with its window checkpoints) and copied back when that
conversation returns: a copy of the cache is far cheaper than evaluating its tokens again.
The shelf holds at most `max_bytes`; the least recently used state goes first.

Each state carries the key its tokens were evaluated under (`serve`'s `prompt_cache_key`;
None: no key), and a prompt reuses only a state of its own key: a client could otherwise
learn, from the tokens reported cached or from how soon the reply comes, what another client
sent. All keys share the one budget and the one order of use.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

PREFIX_BLOCK = 256  # tokens compared at once by `common_prefix`


@dataclass(frozen=True)
class Checkpoint:
    """The window layers' cells when the cache held exactly `n_tokens` tokens."""

    n_tokens: int
    data: Any  # ctypes uint8 array
    turn_start: bool = False  # taken after a prompt that ends with the user's message


@dataclass
class CacheState:
    """What the cache of one conversation holds.

    `oldest` is the first position the window layers still have a cell for (-1: none),
    `prompt_end` the length of the last prompt evaluated (a next turn of the same conversation
    extends that prompt), and `key` the cache key its prompts came with.
    """

    tokens: list[int] = field(default_factory=list)
    checkpoints: list[Checkpoint] = field(default_factory=list)
    prompt_end: int = 0
    oldest: int = 0
    data: Any = None  # the sequence's whole state (ctypes uint8 array) while on the shelf
    key: str | None = None

    @property
    def size(self) -> int:
        """Bytes of native state it holds."""
        own = len(self.data) if self.data is not None else 0
        return own + sum(len(c.data) for c in self.checkpoints)

    def reusable(self, prompt: Sequence[int], window: int) -> int:
        """How many leading tokens of `prompt` this cache can keep."""
        return self.reuse_plan(prompt, window)[0]

    def reuse_plan(self, prompt: Sequence[int], window: int) -> tuple[int, Checkpoint | None]:
        """How many leading tokens of `prompt` this cache can keep (at least one is left to
        evaluate, for its logits), and the checkpoint to restore first if the window layers
        no longer hold the cells before that point."""
        keep = min(common_prefix(self.tokens, prompt), len(prompt) - 1)
        if keep <= 0:
            return 0, None
        if not window or keep >= len(self.tokens) or 0 <= self.oldest <= max(0, keep - window):
            return keep, None
        best = self.checkpoint_for(keep)
        return (min(best.n_tokens, keep), best) if best else (0, None)

    def checkpoint_for(self, keep: int) -> Checkpoint | None:
        """The latest checkpoint a cache trimmed to `keep` tokens can restore."""
        usable = [c for c in self.checkpoints if c.n_tokens <= keep + 1]
        return max(usable, key=lambda c: c.n_tokens) if usable else None


class StateShelf:
    """Cache states of conversations not running now, least recently used first out.

    Args:
        max_bytes: What all kept states may take together; 0 keeps none.
    """

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._states: list[CacheState] = []  # oldest first

    @property
    def size(self) -> int:
        """Bytes kept now."""
        return sum(s.size for s in self._states)

    def __len__(self) -> int:
        return len(self._states)

    def put(self, state: CacheState) -> bool:
        """Keep `state`, making room by dropping the oldest; False if it alone is too large."""
        if state.size > self.max_bytes:
            return False
        self._states.append(state)
        while self.size > self.max_bytes:
            self._states.pop(0)
        return True

    def take_best(
        self, prompt: Sequence[int], window: int, beating: int, key: str | None = None
    ) -> CacheState | None:
        """Remove and return the state of `key` that can keep the most of `prompt`, if that is
        more than `beating` tokens."""
        best, most = None, beating
        for state in self._states:
            if state.key != key:
                continue
            keep = state.reusable(prompt, window)
            if keep > most:
                best, most = state, keep
        if best is not None:
            self._states.remove(best)
        return best


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """The length of the longest common prefix of two token lists.

    Blocks are compared as slices first (in C), so a long shared history costs little: the
    shelf compares every prompt with each state it holds.
    """
    limit = min(len(a), len(b))
    index = 0
    while (
        index + PREFIX_BLOCK <= limit
        and a[index : index + PREFIX_BLOCK] == b[index : index + PREFIX_BLOCK]
    ):
        index += PREFIX_BLOCK
    while index < limit and a[index] == b[index]:
        index += 1
    return index
