"""The message the model reads: the typed text first, then each attachment, blank lines
between; and the token estimate for engines without a tokenizer."""

from __future__ import annotations

import pytest

from gptoss_local.attachments import AttachedFile, estimate_tokens, with_attachments


def attached(text: str) -> AttachedFile:
    return AttachedFile("n", "/n", "0" * 64, "text", text, 1)


def test_attachments_follow_the_typed_text() -> None:
    message = with_attachments("Review these.", [attached("File: a"), attached("File: b")])
    assert message == "Review these.\n\nFile: a\n\nFile: b"


def test_no_attachments_leave_the_text_as_typed() -> None:
    assert with_attachments("  as typed\n", []) == "  as typed\n"


def test_an_empty_text_adds_no_blank_lines() -> None:
    assert with_attachments("", [attached("File: a")]) == "File: a"
    assert with_attachments(" \n", [attached("File: a")]) == "File: a"


@pytest.mark.parametrize(
    ("text", "tokens"),
    [("", 0), ("a", 1), ("abcd", 1), ("abcde", 2), ("x" * 400, 100), ("é" * 4, 2)],
)
def test_the_estimate_is_a_token_per_four_bytes(text: str, tokens: int) -> None:
    assert estimate_tokens(text) == tokens
