"""Tokenizing in pieces: the same tokens as one call, long words without a crash, a cancel that
stops a huge prompt. The exactness checks use gpt-oss's real vocabulary (tests/o200k_gguf.py)."""

from __future__ import annotations

import datetime
import json
import random
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest
from installed_cli import gptoss

from gptoss_local.backends.base import GenerationSettings, ReplyRequest
from gptoss_local.backends.llamacpp import native, token_chunks
from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
from gptoss_local.backends.llamacpp.load import LoadSettings
from gptoss_local.backends.llamacpp.token_chunks import (
    TokenizeCancelled,
    on_big_stack,
    pieces,
    tokenize_reusing,
)
from gptoss_local.conversation import Conversation, Message
from gptoss_local.harmony import render_prompt

REPO = Path(__file__).parents[2]
# 20,000 letters passed before; 30,000 overflowed llama.cpp's stack. "the" is one token of the
# synthetic vocabulary, so the word fits a tiny model's context.
LONG_WORD = "the" * 10_000


def tokenize_in_pieces(
    text: str,
    special: bool,
    tokenize: Callable[[str, bool], list[int]],
    cancel: threading.Event | None = None,
    limit: int | None = None,
) -> list[int]:
    """Tokens of `text` as the backend tokenizes a prompt with nothing earlier to reuse."""
    return tokenize_reusing(text, special, tokenize, (), cancel, limit).tokens.tolist()


def _alphabet() -> list[str]:
    return [*"abcXYZ  \n\n\t\r,.;!?'\"-_/\\()[]{}<>|=+*&%$#@~`^0123456789",
            "  ", "\u00a0", "\u3000", "\u2028", "\u0301", "é", "ß", "中文", "，", "。", "日本語",
            "Ü", "ǅ", "ﬁ", "'s", "'LL", "🙂", "👩‍💻", " \n ", "\n\n\n", "    ", "<|start|>",
            "<|end|>", "<|message|>", "<|channel|>", "<|constrain|>", "<|return|>", "<|call|>",
            "<|", "|>", "\u200b", "\ufeff", "\x0b", "\x1c", "\x85", "ǲ", "Ⅻ", "½", "٣"]  # fmt: skip


def _random_texts(count: int, seed: int) -> list[str]:
    rng, alphabet = random.Random(seed), _alphabet()
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 400))) for _ in range(count)]


def _corpus() -> list[str]:
    """Normal text: this project's source and docs, and Harmony prompts."""
    files = [*sorted(REPO.glob("gptoss_local/backends/**/*.py"))[:12], REPO / "README.md"]
    files += [REPO / "docs" / "serve.md", REPO / "docs" / "tools.md"]  # README's reference parts
    texts = [f.read_text(encoding="utf-8") for f in files]
    conversation = [Message("user", "Wie geht's? Ça va, 你好！ 1234567 x'll"),
                    Message("assistant", "Fine.\n\n```py\nprint('hi')\n```")]  # fmt: skip
    day = datetime.date(2026, 12, 3)
    texts.append(render_prompt(conversation, effort="high", current_date=day))
    return texts


def _every_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pieces as small as the cuts allow, so that every cut is exercised."""
    monkeypatch.setattr(token_chunks, "CHUNK_CHARS", 0)


def test_the_vocabulary_is_o200k(o200k: object) -> None:
    import toktok

    # Normal text only: on odd mixes (combining marks after digits, say) llama.cpp's regex
    # itself strays from tiktoken's, which is llama.cpp's business, not what is checked here.
    encoding = toktok._encoding("o200k_base")
    for text in _corpus():
        text = text.replace("<|", "<")  # the reference knows no control tokens
        assert native.tokenize(o200k, text, False) == list(encoding.encode(text)), text[:80]


@pytest.mark.parametrize("special", [True, False])
def test_pieces_give_the_tokens_of_one_call(
    o200k: object, special: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    _every_cut(monkeypatch)
    whole = lambda text, special: native.tokenize(o200k, text, special)  # noqa: E731
    texts = [*_corpus(), *_random_texts(400, seed=7)]
    cuts = 0
    for text in texts:
        assert "".join(p for p, _ in pieces(text, special)) == text
        cuts += len(list(pieces(text, special))) - 1
        assert tokenize_in_pieces(text, special, whole) == whole(text, special), text[:80]
    assert cuts > 5_000  # the cuts were really made


@pytest.mark.parametrize("run", ["a", "日", ".", " ", "\n", "é\u0301"])
def test_a_long_run_is_tokenized_whole_on_a_big_stack(
    o200k: object, run: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _every_cut(monkeypatch)
    text = f"Look: {run * 60_000} and the end."
    tokenize = lambda text, special: native.tokenize(o200k, text, special)  # noqa: E731
    assert tokenize_in_pieces(text, True, tokenize) == on_big_stack(tokenize, text, True)


def test_a_stretch_longer_than_any_stack_is_cut_outside_control_tokens() -> None:
    limit = token_chunks.LONGEST_STRETCH
    text = "x" * (limit - 3) + "<|message|>" + "y" * (limit + 10)
    parts = [p for p, _ in pieces(text, True)]
    assert "".join(parts) == text
    assert all(len(p) <= limit for p in parts)
    assert any(p.startswith("<|message|>") for p in parts)


def test_a_set_cancel_stops_between_pieces() -> None:
    cancel, calls = threading.Event(), []

    def tokenize(text: str, special: bool) -> list[int]:
        calls.append(text)
        cancel.set()
        return [1]

    with pytest.raises(TokenizeCancelled):
        tokenize_in_pieces("word " * 20_000, True, tokenize, cancel)
    assert len(calls) == 1


def test_a_huge_prompt_is_cancelled_while_it_is_tokenized(tiny_gguf: Path) -> None:
    messages = [Message("user", f"message {n}") for n in range(40_000)]
    cancel = threading.Event()
    with LlamaCppBackend(tiny_gguf, LoadSettings(context=2048, gpu_layers=0)) as backend:
        threading.Timer(0.3, cancel.set).start()
        started = time.monotonic()
        reply = backend.stream(ReplyRequest(Conversation(messages), GenerationSettings()), cancel)
        assert list(reply) == []
        assert reply.stats is not None and reply.stats.stop_reason == "cancelled"
        assert time.monotonic() - started < 10


def test_run_answers_a_message_of_one_30000_letter_word(roomy_gguf: Path) -> None:
    # Before: llama.cpp's regex recursed once per letter and the process died with SIGSEGV (139).
    done = gptoss("run", "--model-path", str(roomy_gguf), "--context", "16384",
                  "--max-tokens", "4", LONG_WORD)  # fmt: skip
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert "Traceback" not in done.stderr


def test_the_engine_tokenizes_a_long_word_on_a_small_thread_stack(tiny_gguf: Path) -> None:
    # serve and the chat tokenize on worker threads; give this one a small stack on purpose.
    result: list[int] = []
    with LlamaCppBackend(tiny_gguf, LoadSettings(context=2048, gpu_layers=0)) as backend:
        previous = threading.stack_size(2 << 20)
        try:
            worker = threading.Thread(target=lambda: result.extend(backend.tokenize(LONG_WORD)))
            worker.start()
        finally:
            threading.stack_size(previous)
        worker.join()
    assert len(result) > 1000


def test_serve_answers_a_30000_letter_word_and_lives_on(roomy_gguf: Path, tmp_path: Path) -> None:
    # Before: serve died with SIGSEGV and no log line, for the word in a message or a tool name.
    from serve_helpers import serve_process

    body = {"model": "roomy", "max_tokens": 4, "reasoning_effort": "low",
            "messages": [{"role": "user", "content": LONG_WORD}]}  # fmt: skip
    tool = {"type": "function", "function": {"name": LONG_WORD[:30_000], "parameters": {}}}
    named = {**body, "messages": [{"role": "user", "content": "hi"}], "tools": [tool]}
    with serve_process(roomy_gguf, tmp_path / "home", "--context", "16384") as served:
        url = f"http://127.0.0.1:{served.port}/v1/chat/completions"
        for sent in (body, named):
            request = urllib.request.Request(url, json.dumps(sent).encode(),
                                             {"Content-Type": "application/json"})  # fmt: skip
            with urllib.request.urlopen(request, timeout=120) as answer:
                assert answer.status == 200
                assert json.load(answer)["choices"][0]["finish_reason"] in ("stop", "length")
        assert served.process.poll() is None, served.log()


def test_tokenizing_stops_once_the_context_is_full() -> None:
    calls: list[str] = []

    def tokenize(text: str, special: bool) -> list[int]:
        calls.append(text)
        return [1] * len(text.split())

    tokens = tokenize_in_pieces("word " * 100_000, True, tokenize, limit=3_000)
    assert 3_000 <= len(tokens) < 3_000 + token_chunks.CHUNK_CHARS
    assert len(calls) < 5
