"""A plain chain's draw (logit biases, a temperature, then greedy or the full distribution) taken
in numpy from llama.cpp's logits, the token its chain would draw.

`llama_sampler_sample` copies the whole vocabulary into a candidate array and its `dist` stage
takes the softmax and the running sum in scalar loops: on gpt-oss's 201k-token vocabulary
0.2 ms a token greedy and 1.6 ms with temperature 1 on a 2-core VM, against 1-2 % and ~10 % of
a small model's decode step there (bench/cpu/gap.py). Here: an argmax over the logits, or the
softmax vectorised and the running sum found block by block. Right after a decode the caches
hold the model's weights, not this code's data, and each numpy call costs 3-5 times what it
costs warm: so few calls a token (llama.cpp's row viewed in place, bans set rather than added,
the random numbers taken 64 at a time).

The same token as the chain's: the biases are added in their order (`np.add.at`), the greedy
pick is the first highest logit, and the draw's uniform number comes from the same stream
(std::mt19937 seeded with the chain's seed, two 32-bit words a number, as libstdc++'s
`generate_canonical<double, 53>` takes them; numpy's legacy `RandomState` is that engine).
The sums are taken in another order than the chain's one running double sum, which moves a
bound between two tokens by about 1e-16 of the total, and numpy's float32 exp may differ from
libm's in the last bit: a draw lands on a neighbour only within such a sliver.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from gptoss_local.backends.base import BackendError
from gptoss_local.i18n import _

STAGES = frozenset({"logit_bias", "temp", "greedy", "dist"})
_BLOCK = 1024  # tokens a partial sum covers while searching for the drawn one
_TWO_32 = 4294967296.0
_AHEAD = 64  # uniform numbers taken from the stream at a time (one call, not one a token)


def can_draw(stages: list[str]) -> bool:
    """Whether a chain of `stages` (names, in order) is one this module draws for."""
    return bool(stages) and stages[-1] in ("greedy", "dist") and set(stages) <= STAGES


class QuickDraw:
    """Draws for one chain (`can_draw` said yes) from a context's logits."""

    def __init__(
        self,
        bindings: Any,
        chain: Any,
        n_vocab: int,
        biases: tuple[tuple[int, float], ...],
        temperature: float,
        greedy: bool,
    ) -> None:
        # The row's address as a plain int (the bindings' own function returns a ctypes pointer,
        # which numpy wraps in ~15 µs): a view is made once per address the rows live at.
        self._row = bindings._lib["llama_get_logits_ith"]
        self._row.argtypes, self._row.restype = [ctypes.c_void_p, ctypes.c_int32], ctypes.c_void_p
        self._address, self._view = 0, np.empty(0, dtype=np.float32)
        self._n = n_vocab
        ids = [token for token, _bias in biases]
        self._ids = np.array(ids, dtype=np.int64)
        self._biases = np.array([bias for _token, bias in biases], dtype=np.float32)
        # Biases on distinct tokens add as one indexed sum (`np.add.at` costs ~10 µs a token);
        # bans alone also let greedy take the argmax of llama.cpp's own row, uncopied.
        self._distinct = len(set(ids)) == len(ids)
        self._banned = (
            frozenset(ids) if self._biases.size and np.all(self._biases == -np.inf) else None
        )
        self._temperature = np.float32(temperature)
        self._greedy = greedy
        # One buffer of the vocabulary's size, reused: a new one each token costs as much as
        # the arithmetic (fresh pages) and pushes the decode's data out of the caches.
        self._buffer = np.empty(n_vocab, dtype=np.float32)
        self._starts = np.arange(0, n_vocab, _BLOCK)
        self._seed_of = lambda: int(bindings.llama_sampler_get_seed(chain)) & 0xFFFFFFFF
        self.reset()

    def reset(self) -> None:
        """The random stream from the chain's seed, after the chain's own reset (which draws a
        new seed when none was asked for)."""
        # The seed the chain's `dist` draws with (a random one when none was asked for).
        self._rng = np.random.RandomState(0 if self._greedy else self._seed_of())
        self._uniforms: list[float] = []
        self._next = 0

    def _uniform(self) -> float:
        """The stream's next number in [0, 1), as `generate_canonical` makes it of two words
        (the same numbers whether taken one or `_AHEAD` at a time: each takes two words)."""
        if self._next == len(self._uniforms):
            words = self._rng.randint(0, 1 << 32, 2 * _AHEAD, dtype=np.uint32).astype(np.float64)
            numbers = (words[0::2] + words[1::2] * _TWO_32) / (_TWO_32 * _TWO_32)
            self._uniforms, self._next = np.minimum(numbers, 1.0 - 2.0**-53).tolist(), 0
        self._next += 1
        return self._uniforms[self._next - 1]

    def draw(self, context: Any, index: int) -> int:
        """The token for the logits of the batch's token `index`."""
        scores = self._scores(context, index)
        if self._greedy:
            if not self._ids.size or self._banned is not None:
                token = int(scores.argmax())  # llama.cpp's row, uncopied
                if self._banned is None or token not in self._banned:
                    return token  # the first highest is allowed: the first highest allowed
            return int(self._biased(scores, scaled=False).argmax())
        weights = self._buffer
        if self._temperature == 1.0 and (not self._ids.size or self._banned is not None):
            # gpt-oss's default: the row is shifted into the buffer by its highest allowed
            # score in one pass (no copy first), the banned set to -inf there.
            top = int(scores.argmax())
            if self._banned is None or top not in self._banned:
                np.subtract(scores, scores[top], out=weights)
                if self._banned is not None:
                    weights[self._ids] = -np.inf
                return self._pick(np.exp(weights, out=weights))
        weights = self._biased(scores, scaled=True)
        np.subtract(weights, weights.max(), out=weights)
        return self._pick(np.exp(weights, out=weights))

    def _biased(self, scores: np.ndarray, scaled: bool) -> np.ndarray:
        """The row with the biases added, then divided by the temperature when `scaled`, in
        the buffer (llama.cpp's own row stays as it is)."""
        weights = self._buffer
        divide = scaled and self._temperature != 1.0
        if not self._ids.size or self._banned is not None:
            # A ban makes a score -inf before the division and after it alike: the row is
            # divided or copied into the buffer in one pass, the banned set there.
            if divide:
                np.divide(scores, self._temperature, out=weights)
            else:
                np.copyto(weights, scores)
            if self._banned is not None:
                weights[self._ids] = -np.inf
            return weights
        np.copyto(weights, scores)
        if self._distinct:
            weights[self._ids] += self._biases
        else:
            np.add.at(weights, self._ids, self._biases)  # in order, as the chain adds them
        if divide:
            np.divide(weights, self._temperature, out=weights)
        return weights

    def _scores(self, context: Any, index: int) -> np.ndarray:
        """llama.cpp's logits row for the batch's token `index`, viewed in place."""
        address = self._row(context, index)
        if not address:
            raise BackendError(_("llama.cpp has no logits for the reply's next token"))
        if address != self._address:
            row = (ctypes.c_float * self._n).from_address(address)
            self._address, self._view = address, np.ctypeslib.as_array(row)
        return self._view

    def _pick(self, weights: np.ndarray) -> int:
        """The first token whose running sum of `weights` reaches a uniform share of them."""
        uniform = self._uniform()
        running = np.cumsum(np.add.reduceat(weights, self._starts, dtype=np.float64))
        target = running[-1] * uniform
        block = min(int(np.searchsorted(running, target)), self._starts.size - 1)
        before = running[block - 1] if block else 0.0
        part = weights[block * _BLOCK : (block + 1) * _BLOCK]
        inside = before + np.cumsum(part, dtype=np.float64)
        return block * _BLOCK + min(int(np.searchsorted(inside, target)), part.size - 1)
