"""Reusing the KV cache across turns, so a new turn evaluates only its new tokens.

The cache of sequence 0 holds `tokens`. A new prompt keeps the longest common prefix and drops
the rest. gpt-oss's sliding-window layers keep only the last window of cells (`swa_full=False`),
so after a long reply the cells just before the prefix's end may be gone: for that case a
checkpoint of the window layers is saved at the end of each prompt, and restored when the next
prompt diverges from what follows it (the usual case: the last reply's analysis is dropped).

With a `StateShelf`, a prompt that does not continue the conversation in the cache (another
client's, in `serve`) first puts that conversation's cache on the shelf, and takes back its
own if it is there (see `saved_states`).

A prompt comes with a cache key (`serve`'s `prompt_cache_key`, None without one) and keeps
nothing of a cache evaluated under another key: it starts from an empty cache, however much
it shares with what the cache holds.
"""

from __future__ import annotations

import ctypes
from typing import Any

from gptoss_local.backends.base import BackendError
from gptoss_local.backends.llamacpp import native
from gptoss_local.backends.llamacpp.saved_states import CacheState, Checkpoint, StateShelf
from gptoss_local.i18n import _

MAX_CHECKPOINTS = 4
# Below this many tokens, a state is not worth a copy to RAM and back: evaluating them is as quick.
MIN_SHELVED_GAIN = 32
NO_CELLS = 1  # llama_decode's status when the KV cache has no room for the batch


class PromptCache:
    """Which tokens the KV cache holds for one sequence, and how to keep a prefix of them.

    Args:
        context: The llama.cpp context.
        sliding_window: The model's attention window (0: none).
        shelf: Where other conversations' caches wait; None keeps only the one in the cache.
        sequence: The llama.cpp sequence id.
    """

    def __init__(
        self, context: Any, sliding_window: int, shelf: StateShelf | None = None, sequence: int = 0
    ) -> None:
        self._context = context
        self._window = sliding_window
        self.shelf = shelf
        self.sequence = sequence
        self._live = CacheState()

    @property
    def tokens(self) -> list[int]:
        """The tokens the cache holds, in order (extended in place as tokens are evaluated)."""
        return self._live.tokens

    def prepare(self, prompt: list[int], most: int | None = None, key: str | None = None) -> int:
        """Trim the cache to the longest reusable prefix of `prompt` (of at most `most`
        tokens) that was evaluated under the cache key `key`; returns its length.

        At least the last prompt token is always left to evaluate, for its logits.
        """
        self._live.oldest = self._oldest()
        if self.shelf is not None:
            self._switch_conversation(prompt, self.shelf, key)
        if self._live.key != key:  # another key's conversation (shelved above, if worth it)
            self.clear()
            self._live.key = key
        # A prompt cut after `most` + 1 tokens keeps at most `most` (its last is evaluated).
        planned = prompt if most is None else prompt[: most + 1]
        keep, checkpoint = self._live.reuse_plan(planned, self._window)
        if checkpoint is not None:
            self._restore_checkpoint(checkpoint)
        if keep <= 0 or not self._trim(keep):
            self.clear()
            return 0
        del self.tokens[keep:]
        live = self._live
        live.checkpoints = [c for c in live.checkpoints if c.n_tokens <= keep]
        live.prompt_end = min(live.prompt_end, keep)
        return keep

    def reusable(self, prompt: list[int], key: str | None = None) -> int:
        """How many leading tokens of `prompt`, under cache key `key`, the cache could keep
        as it is now."""
        if self._live.key != key:
            return 0
        self._live.oldest = self._oldest()
        return self._live.reusable(prompt, self._window)

    def clear(self) -> None:
        """Empty the cache of this sequence (what is on the shelf stays; the key stays)."""
        native.lib().llama_memory_seq_rm(self._memory(), self.sequence, -1, -1)
        self._live = CacheState(key=self._live.key)

    def shelve_and_clear(self) -> None:
        """Free this sequence's cells, keeping its state on the shelf when there is one."""
        if self.shelf is not None and self.tokens:
            self._live.oldest = self._oldest()
            self._shelve(self.shelf)
        self.clear()

    def prompt_done(self, turn_start: bool = False) -> None:
        """Note that a prompt ends here, and checkpoint the window layers (call after a prompt).

        `turn_start`: the prompt ends with the user's message. The next user message's prompt
        leaves out this turn's reasoning and calls (Harmony's history rules), so it parts from
        the cache right here: that checkpoint is kept however many tool calls follow.
        """
        self._live.prompt_end = len(self.tokens)
        if not self._window or not self.tokens:
            return
        bindings = native.lib()
        flags = bindings.LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY
        size = bindings.llama_state_seq_get_size_ext(self._context, self.sequence, flags)
        data = (ctypes.c_uint8 * size)()
        bindings.llama_state_seq_get_data_ext(self._context, data, size, self.sequence, flags)
        kept = [c for c in self._live.checkpoints if c.n_tokens != len(self.tokens)]
        kept.append(Checkpoint(len(self.tokens), data, turn_start))
        self._live.checkpoints = _retained(kept)

    def _switch_conversation(self, prompt: list[int], shelf: StateShelf, key: str | None) -> None:
        """Unless `prompt` continues the conversation in the cache: shelve that one, and bring
        back the shelved state of `key` that keeps the most of `prompt`."""
        live = self._live
        end, same_key = live.prompt_end, live.key == key
        if (
            same_key
            and live.tokens
            and len(prompt) >= end > 0
            and prompt[:end] == live.tokens[:end]
        ):
            return  # the next turn (or a retry) of the same conversation
        here = live.reusable(prompt, self._window) if same_key else 0
        wanted = shelf.take_best(prompt, self._window, here + MIN_SHELVED_GAIN, key)
        if len(live.tokens) - here >= MIN_SHELVED_GAIN:
            self._shelve(shelf)
        if wanted is not None and not self._bring_back(wanted):
            self.clear()

    def _shelve(self, shelf: StateShelf) -> None:
        """Copy the whole state of the conversation in the cache to the shelf."""
        bindings = native.lib()
        size = bindings.llama_state_seq_get_size(self._context, self.sequence)
        if size <= 0 or size + self._live.size > shelf.max_bytes:
            return
        data = (ctypes.c_uint8 * size)()
        if bindings.llama_state_seq_get_data(self._context, data, size, self.sequence) != size:
            return
        live = self._live
        shelf.put(CacheState(list(live.tokens), list(live.checkpoints), live.prompt_end,
                             self._oldest_saved(), data, live.key))  # fmt: skip

    def _oldest_saved(self) -> int:
        """The first position a saved state of the window layers holds.

        The window layers may still hold cells the window has passed (they go only when their
        place is needed), but a saved state keeps just the last window of them: its restore
        begins there, not at the oldest cell now in the cache.
        """
        oldest = self._oldest()
        if not self._window or oldest < 0:
            return oldest
        last = int(native.lib().llama_memory_seq_pos_max(self._memory(), self.sequence))
        return max(oldest, last - self._window + 1)

    def _bring_back(self, state: CacheState) -> bool:
        """Replace the cache with a shelved state; False if llama.cpp refused it."""
        bindings = native.lib()
        bindings.llama_memory_seq_rm(self._memory(), self.sequence, -1, -1)
        loaded = bindings.llama_state_seq_set_data(
            self._context, state.data, len(state.data), self.sequence
        )
        if loaded == 0:
            return False
        self._live = CacheState(
            state.tokens, state.checkpoints, state.prompt_end, self._oldest(), key=state.key
        )
        return True

    def _trim(self, keep: int) -> bool:
        """Drop the cells from position `keep` on; False unless what is left holds positions
        up to `keep` - 1 and, in the window layers, every one the next token attends to.

        Prompts are decoded at the position after the sequence's last cell (llama.cpp places
        them): a trim that left the window layers empty would put the prompt at position 0,
        beside the cells the full layers kept, and fill the cache with duplicates.
        """
        bindings = native.lib()
        memory = self._memory()
        if not bindings.llama_memory_seq_rm(memory, self.sequence, keep, -1):
            return False
        first = bindings.llama_memory_seq_pos_min(memory, self.sequence)
        last = bindings.llama_memory_seq_pos_max(memory, self.sequence)
        needed = max(0, keep - self._window + 1) if self._window else 0
        return bool(last == keep - 1 and 0 <= first <= needed)

    def _memory(self) -> Any:
        return native.lib().llama_get_memory(self._context)

    def _oldest(self) -> int:
        """The first position the window layers still hold (-1: the cache is empty)."""
        return int(native.lib().llama_memory_seq_pos_min(self._memory(), self.sequence))

    def _restore_checkpoint(self, checkpoint: Checkpoint) -> None:
        bindings = native.lib()
        flags = bindings.LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY
        data = checkpoint.data
        bindings.llama_state_seq_set_data_ext(self._context, data, len(data), self.sequence, flags)


def _retained(checkpoints: list[Checkpoint]) -> list[Checkpoint]:
    """The latest `MAX_CHECKPOINTS`, with the first and the latest turn starts among them in
    place of the oldest others.

    The first turn start ends the conversation's first prompt (its instructions and first user
    message): a new chat that begins as this one did parts from it there, however many turns
    this one has had since.
    """
    starts = [c for c in checkpoints if c.turn_start]
    pinned = [c for c in checkpoints if c is starts[0] or c is starts[-1]] if starts else []
    others = [c for c in checkpoints if not any(c is p for p in pinned)]
    room = max(0, MAX_CHECKPOINTS - len(pinned))
    kept = pinned + (others[-room:] if room else [])
    return sorted(kept, key=lambda c: c.n_tokens)


def prompt_failure(status: int) -> BackendError:
    """The error for a prompt batch llama.cpp did not evaluate (`llama_decode`'s `status`);
    the caller has cleared the sequence's cache.

    A prompt longer than the context is refused before it is evaluated, so "no room" here
    means cells the cache holds that this conversation does not account for: a new try
    evaluates the conversation anew. Other statuses are failures of the computation itself.
    """
    if status == NO_CELLS:
        return BackendError(
            _("llama.cpp found no room in its KV cache for the prompt (status 1)."),
            hint=_(
                "The cache of this conversation was cleared: send the message again, and the "
                "conversation is evaluated anew."
            ),
            kind="decode_failed",
        )
    return BackendError(
        _("llama.cpp failed to evaluate the prompt (status {status})").format(status=status),
        hint=_("Memory may be short: load the model with a smaller --context."),
        kind="decode_failed",
    )
