"""The user's message as the model sees it, attachments inlined, and a token estimate for
engines that have no tokenizer to count with."""

from __future__ import annotations

from collections.abc import Sequence

from gptoss_local.attachments.model import AttachedFile


def with_attachments(text: str, attachments: Sequence[AttachedFile]) -> str:
    """The typed text, then each attachment's text, separated by blank lines.

    The question comes first so the model reads what is asked before the files it is about;
    with no attachments the text is returned as it is, and an empty text adds no blank lines.
    """
    if not attachments:
        return text
    parts = [text] if text.strip() else []
    parts.extend(attachment.text for attachment in attachments)
    return "\n\n".join(parts)


def estimate_tokens(text: str) -> int:
    """About one token per four bytes of UTF-8 (o200k's rate on English and code), at least
    one for any non-empty text; for a backend that cannot count with the model's tokenizer."""
    return -(-len(text.encode("utf-8")) // 4)
