"""Reusing the KV cache across turns, so a new turn evaluates only its new tokens.

The cache of sequence 0 holds `tokens`. A new prompt keeps the longest common prefix and drops
the rest. gpt-oss's sliding-window layers keep only the last window of cells (`swa_full=False`),
so after a long reply the cells just before the prefix's end may be gone: for that case a
checkpoint of the window layers is saved at the end of each prompt, and restored when the next
prompt diverges from what follows it (the usual case: the last reply's analysis is dropped).
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any

from gptoss_local.backends import llama_native as native

MAX_CHECKPOINTS = 4


@dataclass(frozen=True)
class Checkpoint:
    """The window layers' cells when the cache held exactly `n_tokens` tokens."""

    n_tokens: int
    data: Any  # ctypes uint8 array


class PromptCache:
    """Which tokens the KV cache of sequence 0 holds, and how to keep a prefix of them."""

    def __init__(self, context: Any, sliding_window: int) -> None:
        self._context = context
        self._window = sliding_window
        self.tokens: list[int] = []
        self._checkpoints: list[Checkpoint] = []

    def prepare(self, prompt: list[int]) -> int:
        """Trim the cache to the longest reusable prefix of `prompt`; returns its length.

        At least the last prompt token is always left to evaluate, for its logits.
        """
        keep = min(_common_prefix(self.tokens, prompt), len(prompt) - 1)
        if keep > 0 and not self._window_has_cells_for(keep):
            keep = self._restore_checkpoint(keep)
        if keep <= 0:
            self.clear()
            return 0
        memory = native.lib().llama_get_memory(self._context)
        native.lib().llama_memory_seq_rm(memory, 0, keep, -1)
        del self.tokens[keep:]
        self._checkpoints = [c for c in self._checkpoints if c.n_tokens <= keep]
        return keep

    def clear(self) -> None:
        """Empty the cache."""
        native.lib().llama_memory_clear(native.lib().llama_get_memory(self._context), True)
        self.tokens.clear()
        self._checkpoints.clear()

    def save_checkpoint(self) -> None:
        """Remember the window layers' state at the current length (call after a prompt)."""
        if not self._window or not self.tokens:
            return
        bindings = native.lib()
        flags = bindings.LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY
        size = bindings.llama_state_seq_get_size_ext(self._context, 0, flags)
        data = (ctypes.c_uint8 * size)()
        bindings.llama_state_seq_get_data_ext(self._context, data, size, 0, flags)
        self._checkpoints = [c for c in self._checkpoints if c.n_tokens != len(self.tokens)]
        self._checkpoints.append(Checkpoint(len(self.tokens), data))
        del self._checkpoints[:-MAX_CHECKPOINTS]

    def _window_has_cells_for(self, keep: int) -> bool:
        if not self._window or keep >= len(self.tokens):
            return True
        memory = native.lib().llama_get_memory(self._context)
        oldest = native.lib().llama_memory_seq_pos_min(memory, 0)
        return 0 <= oldest <= max(0, keep - self._window)

    def _restore_checkpoint(self, keep: int) -> int:
        usable = [c for c in self._checkpoints if c.n_tokens <= keep + 1]
        if not usable:
            return 0
        best = max(usable, key=lambda c: c.n_tokens)
        bindings = native.lib()
        flags = bindings.LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY
        bindings.llama_state_seq_set_data_ext(self._context, best.data, len(best.data), 0, flags)
        return min(best.n_tokens, keep)


def _common_prefix(a: list[int], b: list[int]) -> int:
    limit = min(len(a), len(b))
    index = 0
    while index < limit and a[index] == b[index]:
        index += 1
    return index
