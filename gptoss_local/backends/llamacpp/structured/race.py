"""The chain's draw among the tokens grammars allow, asking the grammars about few tokens.

When the token a chain drew is refused, the exact alternative is the chain's draw over what the
grammars allow, and llama.cpp's grammar pass over gpt-oss's 201,088 tokens costs 20 to 130 ms.
A chain that only moves logits (biases, penalties, temperature) and then draws from the softmax
(dist) or takes the best (greedy) draws the same as a race: each token scores its logit plus
its own Gumbel noise (none for greedy) and the best allowed score wins, which is a draw from
the softmax over the allowed tokens alone. So the grammars are first asked about the best
`FIRST_ASKED` tokens by score, which nearly always hold the winner for a trained model; if none
fits, about every token (by the token tree, `token_trie.py`), and the best allowed one wins.

Truncating stages (top-k, top-p, min-p) depend on the whole allowed set, so a chain with them
is not raced (`raceable`).
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

# Tokens asked about first, by rank of score.
FIRST_ASKED = 64
# The stages a race reproduces: logit shifts, then the draw.
_SHIFTS = {"until_final", "logit_bias", "penalties", "temp"}
_DRAWS = {"dist", "greedy"}

TOKEN_DATA = np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)])


def raceable(stages: Sequence[str]) -> bool:
    """Whether a chain of `stages` (names, in order) draws as a race can."""
    return bool(stages) and stages[-1] in _DRAWS and set(stages[:-1]) <= _SHIFTS


class Race:
    """Draws like a raceable chain, among the tokens `allowed` lets through.

    `allowed(ids)`: a mask of the token ids the grammars allow; `all_allowed()`: that mask over
    the whole vocabulary; `keeps(token)`: a last check on the winner (well-formed UTF-8), a
    refusal sending the race on to the next best.
    """

    def __init__(self, bindings: Any, n_vocab: int, greedy: bool, seed: int | None) -> None:
        self._bindings = bindings
        self._n = n_vocab
        self._greedy = greedy
        self._seed = seed
        self._rng = np.random.default_rng(seed)

    def reset(self) -> None:
        self._rng = np.random.default_rng(self._seed)

    def draw(
        self,
        chain: Any,
        candidates: Any,
        logits: np.ndarray,
        excluded: list[int],
        allowed: Callable[[np.ndarray], np.ndarray],
        all_allowed: Callable[[], np.ndarray],
        keeps: Callable[[int], bool],
    ) -> int | None:
        """The winner over `candidates` (the whole vocabulary in id order, `logits` its logit
        column, both overwritten), leaving out `excluded`; None when nothing is allowed."""
        b = self._bindings
        for i in range(int(b.llama_sampler_chain_n(chain)) - 1):  # every stage but the draw
            b.llama_sampler_apply(b.llama_sampler_chain_get(chain, i), ctypes.byref(candidates))
        scores = logits.astype(np.float32, copy=True)
        if not self._greedy:  # Gumbel-max: logit - log(Exp(1)) is logit + Gumbel noise
            waits = self._rng.standard_exponential(self._n, dtype=np.float32)
            scores -= np.log(np.maximum(waits, np.finfo(np.float32).tiny))  # float32 draws 0
        scores[excluded] = -np.inf
        negated = -scores
        first = min(FIRST_ASKED, self._n)
        best = np.argpartition(negated, first - 1)[:first]
        best = best[np.isfinite(scores[best])]
        found = self._winner(best, negated, allowed(best), keeps)
        if found is not None:
            return found
        rest = all_allowed() & np.isfinite(scores)
        rest[best] = False
        ids = np.flatnonzero(rest)
        return self._winner(ids, negated, np.ones(ids.size, dtype=bool), keeps)

    @staticmethod
    def _winner(
        ids: np.ndarray, negated: np.ndarray, fits: np.ndarray, keeps: Callable[[int], bool]
    ) -> int | None:
        """The best-scoring of `ids` that `fits` and `keeps`."""
        ids = ids[fits]
        for token in ids[np.argsort(negated[ids], kind="stable")]:
            if keeps(int(token)):
                return int(token)
        return None
