"""The chat counts an attachment's tokens with the engine's tokenizer where the engine's
capabilities declare one; before a model is loaded, or on an engine that keeps its tokenizer
to itself, by the estimate (and that engine's methods are never called)."""

from __future__ import annotations

from pathlib import Path

from gptoss_local.attachments import estimate_tokens
from gptoss_local.backends.base import Capabilities, no_tokenizer
from gptoss_local.tui.attaching import Attacher

TEXT = "def double(n):\n    return 2 * n\n" * 20


class Engine:
    """An engine with or without a tokenizer (here: one token per word)."""

    def __init__(self, tokenizer: bool) -> None:
        self.capabilities = Capabilities(tokenizer=tokenizer)

    def tokenize(self, text: str, special: bool = True) -> list[int]:
        if not self.capabilities.tokenizer:
            raise no_tokenizer("scripted")
        assert not special  # a file's text: control tokens in it are plain text
        return [len(word) for word in text.split()]


def _count(engine: Engine | None) -> int:
    attacher = Attacher(Path.cwd(), None, lambda: engine, lambda: None)  # type: ignore[arg-type]
    return attacher.count_tokens(TEXT)


def test_the_engines_tokenizer_counts_where_it_has_one() -> None:
    assert _count(Engine(tokenizer=True)) == len(TEXT.split())


def test_without_a_tokenizer_or_a_model_the_tokens_are_estimated() -> None:
    """Before, the chat found `tokenize` by its name and called it whatever the engine."""
    assert _count(Engine(tokenizer=False)) == _count(None) == estimate_tokens(TEXT)
    assert estimate_tokens(TEXT) != len(TEXT.split())  # the two counts tell apart
