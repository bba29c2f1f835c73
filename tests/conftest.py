"""Shared fixtures: every test gets its own gptoss-local home and the shipped manifest; the tiny
and small synthetic models; `gptoss-local` run in this process; a machine with an RTX 4090.
Each test gets its tier (`slow`, `terminal`, `clients`: tests/tiers.py) as it is collected."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tiers import mark_tiers

# The tests read English words whatever the machine's locale; those about the catalogs set a
# language of their own (and take this variable out).
os.environ["GPTOSS_LOCAL_LANG"] = "en"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    mark_tiers(items)


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
def eagle_gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random-weight EAGLE-3 head for the tiny model (drafts it makes are mostly refused)."""
    from synthetic import TINY
    from synthetic.eagle3 import write_eagle3

    return write_eagle3(tmp_path_factory.mktemp("models") / "eagle3.gguf", TINY, seed=2)


@pytest.fixture(scope="session")
def roomy_gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model with a 32k-token context: room for prompts of tens of thousands of
    tokens (its vocabulary makes one token of little more than a letter)."""
    import dataclasses

    from synthetic import TINY, write_gguf

    shape = dataclasses.replace(TINY, name="tiny-roomy", context_length=32_768)
    return write_gguf(tmp_path_factory.mktemp("models") / "roomy.gguf", shape, seed=1)


@pytest.fixture(scope="session")
def small_gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A mid-size (63 MB) random-weight gpt-oss GGUF, slow enough to interrupt."""
    from synthetic import SMALL, write_gguf

    return write_gguf(tmp_path_factory.mktemp("models") / "small.gguf", SMALL, seed=2)


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """`cli(*argv)`: `gptoss-local argv` run in this process; its exit code, stdout and stderr."""
    from gptoss_local.cli import main

    def run(*argv: str) -> tuple[int, str, str]:
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.fixture
def rtx_4090(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the hardware probe see one RTX 4090 (typical free VRAM), whatever this machine has."""
    from cards import card
    from fake_nvml import FakeNvml

    from gptoss_local.hardware import machine as hardware

    monkeypatch.setattr(hardware, "load_nvml", lambda: FakeNvml([card("4090")]))


@pytest.fixture
def tiny_fs(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs, for a disk that fills (root only; skipped where mounting is not possible)."""
    mount = tmp_path / "tiny-fs"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)
