"""A plain chain's draw (logit biases, a temperature, then greedy or the full distribution) taken
in numpy from llama.cpp's logits, the token its chain would draw.

`llama_sampler_sample` copies the whole vocabulary into a candidate array and its `dist` stage
takes the softmax and the running sum in scalar loops: on gpt-oss's 201k-token vocabulary
0.2 ms a token greedy and 1.6 ms with temperature 1 on a 2-core VM, against 1-2 % and ~10 % of
a small model's decode step there (bench/cpu/gap.py). Here: an argmax over the logits, or the
softmax vectorised and the running sum found block by block.

The same token as the chain's: the biases are added in their order (`np.add.at`), the greedy
pick is the first highest logit, and the draw's uniform number comes from the same stream
(std::mt19937 seeded with the chain's seed, two 32-bit words a number, as libstdc++'s
`generate_canonical<double, 53>` takes them; numpy's legacy `RandomState` is that engine).
The sums are taken in another order than the chain's one running double sum, which moves a
bound between two tokens by about 1e-16 of the total, and numpy's float32 exp may differ from
libm's in the last bit: a draw lands on a neighbour only within such a sliver.
"""

from __future__ import annotations

from typing import Any

import numpy as np

STAGES = frozenset({"logit_bias", "temp", "greedy", "dist"})
_BLOCK = 4096  # tokens a partial sum covers while searching for the drawn one
_TWO_32 = 4294967296.0


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
        self._logits = bindings.llama_get_logits_ith
        self._n = n_vocab
        self._ids = np.array([token for token, _ in biases], dtype=np.int64)
        self._biases = np.array([bias for _, bias in biases], dtype=np.float32)
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

    def draw(self, context: Any, index: int) -> int:
        """The token for the logits of the batch's token `index`."""
        pointer = self._logits(context, index)
        scores = np.ctypeslib.as_array(pointer, shape=(self._n,))
        if self._ids.size:
            np.copyto(self._buffer, scores)  # llama.cpp's own buffer stays as it is
            scores = self._buffer
            np.add.at(scores, self._ids, self._biases)
        if self._greedy:
            return int(np.argmax(scores))
        weights = self._buffer
        if self._temperature != 1.0:
            np.divide(scores, self._temperature, out=weights)
            scores = weights
        np.subtract(scores, scores.max(), out=weights)
        return self._pick(np.exp(weights, out=weights))

    def _pick(self, weights: np.ndarray) -> int:
        """The first token whose running sum of `weights` reaches a uniform share of them."""
        low, high = (float(word) for word in self._rng.randint(0, 1 << 32, 2, dtype=np.uint32))
        uniform = min((low + high * _TWO_32) / (_TWO_32 * _TWO_32), 1.0 - 2.0**-53)
        running = np.cumsum(np.add.reduceat(weights, self._starts, dtype=np.float64))
        target = running[-1] * uniform
        block = min(int(np.searchsorted(running, target)), self._starts.size - 1)
        before = running[block - 1] if block else 0.0
        part = weights[block * _BLOCK : (block + 1) * _BLOCK]
        inside = before + np.cumsum(part, dtype=np.float64)
        return block * _BLOCK + min(int(np.searchsorted(inside, target)), part.size - 1)
