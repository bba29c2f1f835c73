"""The Harmony tests' oracle: OpenAI's own renderer and parser, run offline."""

from __future__ import annotations

from pathlib import Path

import pytest
from harmony_oracle import Oracle, load_encoding


@pytest.fixture(scope="session")
def oracle(tmp_path_factory: pytest.TempPathFactory) -> Oracle:
    """openai-harmony's gpt-oss encoding, its vocabulary written offline (harmony_oracle.py)."""
    folder: Path = tmp_path_factory.mktemp("tiktoken")
    return Oracle(load_encoding(folder), folder)
