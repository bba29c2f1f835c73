"""The backend tests' engine: the tiny real model on the CPU, loaded once per test module."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from engine_helpers import open_tiny

from gptoss_local.backends.llamacpp import native
from gptoss_local.backends.llamacpp.backend import LlamaCppBackend


@pytest.fixture(scope="module")
def backend(tiny_gguf: Path) -> Iterator[LlamaCppBackend]:
    """The tiny model with a 2,048-token context, shared by a module's tests; closed after."""
    with open_tiny(tiny_gguf) as loaded:
        yield loaded


@pytest.fixture(scope="session")
def o200k(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """gpt-oss's vocabulary loaded alone (no weights) through llama.cpp."""
    from o200k_gguf import write_o200k_vocab

    path = write_o200k_vocab(tmp_path_factory.mktemp("vocab") / "o200k.gguf")
    bindings = native.lib()
    params = bindings.llama_model_default_params()
    params.vocab_only = True
    model = bindings.llama_model_load_from_file(str(path).encode(), params)
    assert model, "llama.cpp did not load the vocabulary"
    try:
        yield bindings.llama_model_get_vocab(model)
    finally:
        bindings.llama_model_free(model)
