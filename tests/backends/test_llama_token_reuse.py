"""A prompt that starts like an earlier one takes that one's tokens: exactly the tokens of one
call (gpt-oss's real vocabulary), and only the new text goes to llama.cpp."""

from __future__ import annotations

import datetime
import random
from pathlib import Path

import pytest
from engine_helpers import open_tiny

from gptoss_local.backends.llamacpp import native, token_chunks
from gptoss_local.backends.llamacpp.token_chunks import Tokenized, tokenize_reusing
from gptoss_local.conversation import Message
from gptoss_local.harmony import render_prompt

DAY = datetime.date(2026, 12, 3)


def _chat(turns: int, instructions: str = "Be brief.") -> str:
    messages = []
    for n in range(turns):
        messages.append(Message("user", f"Question {n}: how do I sort a list? " * (1 + n % 5)))
        messages.append(Message("assistant", f"Use sorted(). Answer {n}. " * (2 + n % 7)))
    messages.append(Message("user", "And the last one?"))
    return render_prompt(messages, instructions=instructions, current_date=DAY)


class Counting:
    """`native.tokenize` on a vocabulary, counting the characters it was given."""

    def __init__(self, vocab: object) -> None:
        self.vocab, self.characters = vocab, 0

    def __call__(self, text: str, special: bool) -> list[int]:
        self.characters += len(text)
        return native.tokenize(self.vocab, text, special)


def test_a_growing_chat_tokenizes_only_what_is_new(o200k: object) -> None:
    tokenize, recent = Counting(o200k), list[Tokenized]()
    for turns in (10, 60, 61, 62, 120):
        text = _chat(turns)
        before = tokenize.characters
        done = tokenize_reusing(text, True, tokenize, recent)
        assert done.tokens.tolist() == native.tokenize(o200k, text, True)
        if recent:  # at most the text after the shared start, and one piece before it
            shared = token_chunks._shared_length(recent[-1].text, text)
            assert tokenize.characters - before <= len(text) - shared + token_chunks.CHUNK_CHARS
        recent = [done]


def test_a_changed_start_is_tokenized_again(o200k: object) -> None:
    tokenize = Counting(o200k)
    first = tokenize_reusing(_chat(80), True, tokenize, [])
    tokenize.characters = 0
    text = _chat(80, instructions="Answer in French.")
    done = tokenize_reusing(text, True, tokenize, [first])
    assert done.tokens.tolist() == native.tokenize(o200k, text, True)
    assert tokenize.characters == len(text)


@pytest.mark.parametrize("chunk", [0, 40, 300])
def test_random_edits_keep_the_tokens_exact(
    o200k: object, chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Dense piece ends: every end is a place where an edited text may or may not still cut.
    monkeypatch.setattr(token_chunks, "CHUNK_CHARS", chunk)
    rng = random.Random(chunk)
    alphabet = [*"ab Z,.'\n\t", "  ", "<|start|>", "<|end|>", "中文", "é", " the", "'s"]
    whole = lambda text: native.tokenize(o200k, text, True)  # noqa: E731
    piece = lambda text, special: native.tokenize(o200k, text, special)  # noqa: E731
    for _ in range(150):
        base = "".join(rng.choice(alphabet) for _ in range(rng.randint(20, 300)))
        earlier = tokenize_reusing(base, True, piece, [])
        at = rng.randint(0, len(base))
        edited = base[:at] + "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 20)))
        edited += base[at + rng.randint(0, 5) :] if rng.random() < 0.5 else ""
        assert tokenize_reusing(edited, True, piece, [earlier]).tokens.tolist() == whole(edited), (
            base,
            edited,
        )


def test_the_engine_reads_only_the_new_turn(tiny_gguf: Path) -> None:
    with open_tiny(tiny_gguf, context=4096) as backend:
        seen: list[str] = []
        real = backend._tokenize_piece
        backend._tokenize_piece = lambda text, special: seen.append(text) or real(text, special)  # type: ignore[method-assign]
        first = backend.tokenize(_chat(60))
        read_first = sum(map(len, seen))
        seen.clear()
        second = backend.tokenize(_chat(61))
        assert second == native.tokenize(backend._native.vocab, _chat(61), True)
        assert first == native.tokenize(backend._native.vocab, _chat(60), True)
        assert sum(map(len, seen)) < read_first / 4
