"""Cache keys (`ReplyRequest.cache_key`) in the state shelf and in the tokenizer's recent
prompts: a prompt reuses only what prompts of its own key left (`serve`'s HTTP side of this is
tests/serve/test_serve_cache_keys.py)."""

from __future__ import annotations

import ctypes
from pathlib import Path

import pytest
from engine_helpers import chat, open_tiny, ran

from gptoss_local.backends.base import BackendError, GenerationSettings, ReplyRequest
from gptoss_local.backends.llamacpp.saved_states import CacheState, StateShelf

TOKENS = list(range(1, 301))


def state(key: str | None, size: int = 100) -> CacheState:
    return CacheState(list(TOKENS), prompt_end=len(TOKENS), data=(ctypes.c_uint8 * size)(),
                      key=key)  # fmt: skip


def test_the_shelf_hands_a_state_only_to_a_prompt_of_its_key() -> None:
    shelf = StateShelf(1_000)
    mine, unkeyed = state("a"), state(None)
    shelf.put(mine)
    shelf.put(unkeyed)
    prompt = [*TOKENS, 7]
    assert shelf.take_best(prompt, window=0, beating=0, key="b") is None
    assert shelf.take_best(prompt, window=0, beating=0, key="a") is mine
    assert shelf.take_best(prompt, window=0, beating=0) is unkeyed
    assert len(shelf) == 0


def test_all_keys_share_one_budget_least_recently_used_out_first() -> None:
    shelf = StateShelf(250)
    first, second, third = state("a"), state("b"), state("c")
    for kept in (first, second, third):
        shelf.put(kept)
    prompt = [*TOKENS, 7]
    assert shelf.take_best(prompt, window=0, beating=0, key="a") is None  # the oldest went
    assert shelf.take_best(prompt, window=0, beating=0, key="b") is second
    assert shelf.take_best(prompt, window=0, beating=0, key="c") is third


def test_a_prompt_takes_tokens_only_from_recent_prompts_of_its_key(tiny_gguf: Path) -> None:
    """Tokenizing reuses a recent prompt's tokens (a long chat's in much less time): a prompt
    of another key is tokenized whole, as if nobody had sent it. The prompt is far longer than
    the context, so each request tokenizes one piece of it (`token_chunks.CHUNK_CHARS`) and is
    refused; that piece is what a later request of its key takes as it is."""
    conversation = chat("Tell me about the harbour and the boats that leave before dawn. " * 400)
    with open_tiny(tiny_gguf) as backend:
        tokenized: list[int] = []
        piece = backend._tokenize_piece

        def counted(text: str, special: bool) -> list[int]:
            tokenized.append(len(text))
            return piece(text, special)

        backend._tokenize_piece = counted  # type: ignore[method-assign]

        def characters_tokenized(key: str | None) -> int:
            tokenized.clear()
            request = ReplyRequest(conversation, GenerationSettings(max_tokens=2), cache_key=key)
            with pytest.raises(BackendError) as refused:
                ran(backend.stream(request))
            assert refused.value.kind == "context_full"
            return sum(tokenized)

        whole = characters_tokenized("a")
        assert whole > 4_000
        assert characters_tokenized("b") == whole
        assert characters_tokenized(None) == whole
        assert characters_tokenized("a") == 0
