"""Shared fixtures: every test gets its own gptoss-local home and the shipped manifest."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point GPTOSS_LOCAL_HOME at a fresh folder and drop variables that would steer tests."""
    home = tmp_path / "gptoss-home"
    monkeypatch.setenv("GPTOSS_LOCAL_HOME", str(home))
    for name in ("GPTOSS_LOCAL_MANIFEST", "HF_ENDPOINT", "GPTOSS_LOCAL_OFFLINE", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture(scope="session")
def tiny_gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-layer random-weight gpt-oss GGUF written by the project's synthetic writer."""
    from synthetic import TINY, write_gguf

    return write_gguf(tmp_path_factory.mktemp("models") / "tiny.gguf", TINY, seed=1)


@pytest.fixture(scope="session")
def small_gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A mid-size (63 MB) random-weight gpt-oss GGUF, slow enough to interrupt."""
    from synthetic import SMALL, write_gguf

    return write_gguf(tmp_path_factory.mktemp("models") / "small.gguf", SMALL, seed=2)


@pytest.fixture(scope="session")
def oracle(tmp_path_factory: pytest.TempPathFactory):
    """openai-harmony's gpt-oss encoding, its vocabulary written offline (harmony_oracle.py)."""
    from harmony_oracle import Oracle, load_encoding

    folder = tmp_path_factory.mktemp("tiktoken")
    return Oracle(load_encoding(folder), folder)
