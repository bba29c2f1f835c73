"""`ReplyProgress` counts reasoning and answer tokens: token sequences in the tiny model's
vocabulary (gpt-oss's Harmony control tokens among them), fed as if sampled."""

from __future__ import annotations

import time

from gptoss_local.backends.llamacpp.reply_progress import ReplyProgress


def counted(backend, *parts: str, limit: int | None = None) -> tuple[dict[str, int], int]:
    """Feed `parts` (text, or one control token each) token by token; the counts and how many
    tokens were fed."""
    tokens = [t for part in parts for t in backend.tokenize(part, special=part.startswith("<|"))]
    progress = ReplyProgress(backend._pieces, {}, limit, time.perf_counter())
    for token in tokens:
        progress.feed(token)
    progress.finish()
    return progress.counts, len(tokens)


def size(backend, text: str) -> int:
    return len(backend.tokenize(text, special=False))


def test_headers_and_markers_count_as_neither(backend) -> None:
    counts, _ = counted(
        backend, "<|channel|>", "analysis", "<|message|>", "The user says hi", "<|end|>",
        "<|start|>", "assistant", "<|channel|>", "final", "<|message|>", "Hello there",
    )  # fmt: skip
    assert counts == {"reasoning": size(backend, "The user says hi"),
                      "answer": size(backend, "Hello there")}  # fmt: skip


def test_text_without_a_header_is_reasoning_around_unused_control_tokens(backend) -> None:
    counts, fed = counted(backend, "just some words", "<|reserved_492|>", "and more words")
    assert counts == {"reasoning": fed - 1, "answer": 0}


def test_headerless_text_past_a_line_break_is_reasoning(backend) -> None:
    counts, fed = counted(backend, "first line\nsecond line of text")
    assert counts == {"reasoning": fed, "answer": 0}


def test_text_before_a_header_is_reasoning(backend) -> None:
    counts, _ = counted(backend, "musing aloud", "<|channel|>", "final", "<|message|>", "Hi there")
    wanted = {"reasoning": size(backend, "musing aloud"), "answer": size(backend, "Hi there")}
    assert counts == wanted
