"""Several conversations taking turns on the one llama.cpp sequence, each keeping its prefix
through the state shelf (`keep_conversations`), on the tiny real model (CPU)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from engine_helpers import chat, finished, last_logits, never_stop, open_tiny, prompt_tokens, ran

from gptoss_local.backends.base import GenerationSettings, ReplyRequest
from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
from gptoss_local.backends.llamacpp.options import LlamaOptions
from gptoss_local.backends.llamacpp.saved_states import (
    CacheState,
    Checkpoint,
    StateShelf,
    common_prefix,
)

BATCHES = {"n_batch": 32, "n_ubatch": 32}  # the same batching gives bit-identical logits
GREEDY_ONE = GenerationSettings(temperature=0, max_tokens=1)
SHORT = GenerationSettings(max_tokens=12, seed=3)
A1 = chat("first conversation: plan a picnic by the river for four friends")
A2 = chat("first conversation: plan a picnic by the river for four friends", "and if it rains?",
          reply=("", "Bring bread, fruit and a blanket."))  # fmt: skip
B1 = chat("second conversation: explain how tides work, in a paragraph or two")
C1 = chat("third conversation: name three rivers of Europe and where they meet the sea")


def turn(backend: LlamaCppBackend, conversation, settings=SHORT, options=None):
    return finished(
        ran(backend.stream(ReplyRequest(conversation, settings), options=options))
    ).stats


# Restored cells sit elsewhere in the KV buffer than where they were computed, so attention
# sums them in another order: on the tiny random model that moves logits by up to ~0.04 (as
# evaluating in batches of 64 instead of 32 does), while a one-word change of the conversation
# moves them by more than 0.15.
NOISE = 0.1


def fresh_logits(tiny_gguf: Path, conversation) -> np.ndarray:
    with open_tiny(tiny_gguf, **BATCHES) as fresh:
        turn(fresh, conversation, GREEDY_ONE)
        return last_logits(fresh)


def test_a_conversation_returning_after_another_reuses_its_own_prefix(tiny_gguf: Path) -> None:
    with open_tiny(tiny_gguf, **BATCHES) as shelved, open_tiny(tiny_gguf, **BATCHES) as alone:
        shelved.keep_conversations(64 << 20)
        turn(shelved, A1)
        turn(shelved, B1)  # A's cache goes to the shelf
        assert len(shelved.cache.shelf) == 1
        stats = turn(shelved, A2, GREEDY_ONE)  # B's goes, A's comes back
        assert len(shelved.cache.shelf) == 1
        turn(alone, A1)
        uninterrupted = turn(alone, A2, GREEDY_ONE)
        assert stats.cached_tokens == uninterrupted.cached_tokens >= len(prompt_tokens(alone, A1))
        np.testing.assert_allclose(last_logits(shelved), fresh_logits(tiny_gguf, A2), atol=NOISE)


def test_the_tolerance_tells_another_conversation_apart(tiny_gguf: Path) -> None:
    other = chat(A2.messages[0].content.replace("four", "five"), A2.messages[2].content,
                 reply=("", A2.messages[1].content))  # fmt: skip
    difference = np.abs(fresh_logits(tiny_gguf, A2) - fresh_logits(tiny_gguf, other)).max()
    assert difference > 1.5 * NOISE


def test_without_the_shelf_the_other_conversation_evicts_the_prefix(tiny_gguf: Path) -> None:
    with open_tiny(tiny_gguf, **BATCHES) as backend:
        turn(backend, A1)
        turn(backend, B1)
        stats = turn(backend, A2, GREEDY_ONE)
        shared = common_prefix(prompt_tokens(backend, B1), prompt_tokens(backend, A2))
        assert stats.cached_tokens == shared < len(prompt_tokens(backend, A1))  # the system message


def test_the_window_checkpoint_travels_with_a_shelved_conversation(tiny_gguf: Path) -> None:
    """A long reply pushed the window cells of A's prompt end out of the cache: A's prefix on
    return comes from its checkpoint, shelved with it."""
    with open_tiny(tiny_gguf, **BATCHES) as shelved:
        shelved.keep_conversations(64 << 20)
        endless = LlamaOptions(logit_bias=never_stop(shelved))
        assert turn(shelved, A1, GenerationSettings(max_tokens=300, seed=5), endless)
        turn(shelved, B1)
        stats = turn(shelved, A2, GREEDY_ONE)
        assert stats.cached_tokens == len(prompt_tokens(shelved, A1))
        np.testing.assert_allclose(last_logits(shelved), fresh_logits(tiny_gguf, A2), atol=NOISE)


def test_the_shelf_keeps_the_most_recent_states_within_its_bytes(tiny_gguf: Path) -> None:
    with open_tiny(tiny_gguf, **BATCHES) as backend:
        backend.keep_conversations(64 << 20)
        turn(backend, A1)
        turn(backend, B1)
        shelf = backend.cache.shelf
        assert shelf is not None and len(shelf) == 1
        one_state = shelf.size
        backend.keep_conversations(one_state + one_state // 2)  # room for one state only
        turn(backend, A1, GREEDY_ONE)
        turn(backend, B1)  # A shelved
        turn(backend, C1)  # B shelved, A dropped
        assert len(backend.cache.shelf) == 1
        b_again = turn(backend, B1, GREEDY_ONE)
        assert b_again.cached_tokens == len(prompt_tokens(backend, B1)) - 1
        a_again = turn(backend, A2, GREEDY_ONE)
        assert a_again.cached_tokens < len(prompt_tokens(backend, A1))  # evaluated anew
        backend.keep_conversations(one_state // 2)  # too small for any state
        turn(backend, C1)
        turn(backend, A1)
        assert len(backend.cache.shelf) == 0
        assert turn(backend, C1, GREEDY_ONE).cached_tokens < len(prompt_tokens(backend, C1)) - 1


def test_the_next_turn_of_the_same_conversation_copies_nothing(tiny_gguf: Path) -> None:
    with open_tiny(tiny_gguf, **BATCHES) as backend:
        backend.keep_conversations(64 << 20)
        turn(backend, A1)
        turn(backend, A2)
        turn(backend, A2)  # a retry
        assert len(backend.cache.shelf) == 0


def state(tokens: list[int], size: int) -> CacheState:
    return CacheState(list(tokens), prompt_end=len(tokens), data=bytes(size))


def test_shelf_drops_the_least_recently_used_and_refuses_what_cannot_fit() -> None:
    shelf = StateShelf(max_bytes=250)
    assert shelf.put(state([1, 2, 3, 4], 100)) and shelf.put(state([5, 6, 7, 8], 100))
    assert shelf.put(state([9, 9, 9, 9], 100))  # the first goes
    assert shelf.take_best([1, 2, 3, 4, 0], window=0, beating=0) is None
    assert not shelf.put(state([1], 300))
    assert len(shelf) == 2 and shelf.size == 200


def test_shelf_gives_the_longest_reusable_prefix_only_if_it_beats_the_cache() -> None:
    shelf = StateShelf(max_bytes=1000)
    shelf.put(state([1, 2, 3, 4, 5, 6], 10))
    shelf.put(state([1, 2, 3, 9, 9, 9], 10))
    prompt = [1, 2, 3, 4, 5, 7, 8]
    assert shelf.take_best(prompt, window=0, beating=5) is None
    best = shelf.take_best(prompt, window=0, beating=2)
    assert best is not None and best.tokens[:5] == [1, 2, 3, 4, 5]
    assert len(shelf) == 1  # taken off


def test_a_state_whose_window_forgot_the_prefix_offers_only_its_checkpoint() -> None:
    tokens = list(range(1, 401))
    forgot = CacheState(tokens, oldest=300, prompt_end=100, data=bytes(10))
    assert forgot.reusable([*tokens[:200], 0], window=128) == 0  # no checkpoint
    with_checkpoint = CacheState(tokens, oldest=300, prompt_end=100, data=bytes(10))
    with_checkpoint.checkpoints.append(Checkpoint(100, bytes(5)))
    assert with_checkpoint.reuse_plan([*tokens[:200], 0], window=128)[0] == 100
    assert with_checkpoint.reusable([*tokens, 0], window=128) == 400  # nothing trimmed


def test_a_new_question_after_a_long_tool_chain_keeps_the_turns_start(tiny_gguf: Path) -> None:
    """The next question's prompt leaves out the finished turn's reasoning and calls, so it
    parts from the cache where the turn began: that checkpoint outlives the chain's own."""
    from gptoss_local.backends.llamacpp.prompt_cache import MAX_CHECKPOINTS
    from gptoss_local.conversation import Conversation, Message, Tool, ToolCallRecord

    tool = Tool("look", "Look something up.", {"type": "object", "properties": {}})
    messages = [Message("user", "find out the weather in every city of the list")]
    with open_tiny(tiny_gguf, **BATCHES) as backend:

        def ask() -> object:
            conversation = Conversation(
                tuple(messages), tools=(tool,), current_date=A1.current_date
            )
            return turn(backend, conversation, GenerationSettings(max_tokens=4, seed=3))

        start = ask()
        for n in range(MAX_CHECKPOINTS + 2):  # more calls than checkpoints kept
            call = ToolCallRecord("look", {"n": n})
            messages += [Message("assistant", reasoning=f"step {n}", tool_calls=(call,)),
                         Message("tool", f"result {n} " * 8, tool_name="look")]  # fmt: skip
            ask()
        messages += [Message("assistant", "It is sunny everywhere."), Message("user", "thanks")]
        after = ask()
    assert after.cached_tokens >= start.prompt_tokens
    assert after.evaluated_tokens < 40
