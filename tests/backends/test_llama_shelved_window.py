"""A conversation brought back from the state shelf parts from its saved state before the
window the sliding-window layers kept: its prefix must come from its checkpoint (the tiny real
model on the CPU, with llama.cpp's default batching)."""

from __future__ import annotations

import ctypes
from pathlib import Path

import llama_cpp.llama_cpp as bindings
import numpy as np
from engine_helpers import chat, finished, last_logits, never_stop, open_tiny, prompt_tokens, ran

from gptoss_local.backends.base import GenerationSettings, ReplyRequest, Stats
from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
from gptoss_local.backends.llamacpp.options import LlamaOptions
from gptoss_local.backends.llamacpp.prompt_cache import prompt_failure
from gptoss_local.conversation import Conversation

GREEDY_ONE = GenerationSettings(temperature=0, max_tokens=1)
# Fewer tokens than the window layers have cells (a window and a batch): none is dropped yet.
LONG_REPLY = GenerationSettings(max_tokens=200, seed=5)
A1 = chat("first conversation: plan a picnic by the river for four friends")
A2 = chat("first conversation: plan a picnic by the river for four friends", "and if it rains?",
          reply=("", "Bring bread, fruit and a blanket."))  # fmt: skip
B1 = chat("second conversation: explain how tides work, in a paragraph or two")
NOISE = 0.1  # as in test_llama_conversations: restored cells sum in another order


def turn(
    backend: LlamaCppBackend, conversation: Conversation, settings: GenerationSettings,
    options: LlamaOptions | None = None,
) -> Stats:  # fmt: skip
    request = ReplyRequest(conversation, settings)
    return finished(ran(backend.stream(request, options=options))).stats


def test_a_shelved_state_is_trimmed_only_within_the_window_it_saved(tiny_gguf: Path) -> None:
    """The window layers still held all of A's cells when A was shelved, but a saved state
    keeps only their last window. Trimmed there without A's checkpoint, they were left empty:
    A2 went in at position 0 beside the full layers' cells, and such duplicates filled the
    cache until a prompt found no room ("failed to evaluate the prompt (status 1)")."""
    with open_tiny(tiny_gguf) as shelved:
        shelved.keep_conversations(64 << 20)
        turn(shelved, A1, LONG_REPLY, LlamaOptions(logit_bias=never_stop(shelved)))
        turn(shelved, B1, GREEDY_ONE)  # A goes to the shelf
        stats = turn(shelved, A2, GREEDY_ONE)  # and comes back
        assert stats.cached_tokens == len(prompt_tokens(shelved, A1))
        memory = bindings.llama_get_memory(shelved._native.context)
        assert bindings.llama_memory_seq_pos_max(memory, 0) == len(shelved.cache.tokens) - 1
        shelved_logits = last_logits(shelved)
    with open_tiny(tiny_gguf) as fresh:
        turn(fresh, A2, GREEDY_ONE)
        np.testing.assert_allclose(shelved_logits, last_logits(fresh), atol=NOISE)


def test_a_trim_that_leaves_the_window_layers_behind_starts_afresh(tiny_gguf: Path) -> None:
    """Whatever put the window layers out of step with the tokens the cache lists (here: an
    old snapshot of them, set back by hand), `prepare` keeps no prefix the cache cannot
    continue from: the prompt would go in at the wrong position."""
    with open_tiny(tiny_gguf) as backend:
        turn(backend, A1, GREEDY_ONE)
        context, partial = backend._native.context, bindings.LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY
        size = bindings.llama_state_seq_get_size_ext(context, 0, partial)
        window_layers = (ctypes.c_uint8 * size)()
        bindings.llama_state_seq_get_data_ext(context, window_layers, size, 0, partial)
        turn(backend, A1, LONG_REPLY, LlamaOptions(logit_bias=never_stop(backend)))
        assert bindings.llama_state_seq_set_data_ext(context, window_layers, size, 0, partial)
        tokens = list(backend.cache.tokens)
        kept = backend.cache.prepare([*tokens[: len(tokens) - 40], 0])
        memory = bindings.llama_get_memory(context)
        assert kept == bindings.llama_memory_seq_pos_max(memory, 0) + 1 == 0


def test_no_room_for_a_prompt_that_fits_does_not_blame_the_context() -> None:
    """Prompts longer than the context are refused before they are evaluated: "no room" asks
    for a new try (the cache was cleared), and only a failed computation points at memory."""
    no_room, failed = str(prompt_failure(1)), str(prompt_failure(-3))
    assert "send the message again" in no_room and "context" not in no_room
    assert "status -3" in failed and "Memory may be short" in failed
