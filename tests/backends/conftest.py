"""The backend tests' engine: the tiny real model on the CPU, loaded once per test module."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from engine_helpers import open_tiny

from gptoss_local.backends.llama_cpp import LlamaCppBackend


@pytest.fixture(scope="module")
def backend(tiny_gguf: Path) -> Iterator[LlamaCppBackend]:
    """The tiny model with a 2,048-token context, shared by a module's tests; closed after."""
    with open_tiny(tiny_gguf) as loaded:
        yield loaded
