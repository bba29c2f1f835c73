"""The tiny model steered through a browsing chain (search, open, a cited answer): the
`Steered` backend with one grammar per turn (library_helpers' SEARCHES, OPENS, CITES)."""

from __future__ import annotations

from library_helpers import CITES, OPENS, SEARCHES
from tool_helpers import Steered, ban

from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
from gptoss_local.backends.llamacpp.options import LlamaOptions


def browsing_turns(backend: LlamaCppBackend) -> Steered:
    """Turn 1 searches, turn 2 opens result 0, turn 3 answers citing 【1†L3】."""
    calling = ban(backend, "<|return|>", "<|endoftext|>")
    final = LlamaOptions(CITES, ban(backend, "<|call|>", "<|endoftext|>"))
    return Steered(backend, LlamaOptions(SEARCHES, calling), LlamaOptions(OPENS, calling), final)
