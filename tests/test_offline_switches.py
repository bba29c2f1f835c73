"""Every offline switch (`--offline`, GPTOSS_LOCAL_OFFLINE=1, HF_HUB_OFFLINE=1) stops every path
that could download: `pull`, `pull --backend ollama`, the chat's Ollama opener, and the first-run
download. Ollama is the stand-in program (tests/fake_ollama), which logs each pull asked of it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from fake_ollama.helpers import install

from gptoss_local import catalog, config
from gptoss_local.backends.base import BackendError
from gptoss_local.cli import main
from gptoss_local.hardware import machine as hardware
from gptoss_local.launch.preparation import Preparation
from gptoss_local.plan.wishes import Wishes
from gptoss_local.store.errors import OfflineError

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the stand-in needs a shebang")

SWITCHES = [
    pytest.param("--offline", {}, id="flag"),
    pytest.param(None, {"GPTOSS_LOCAL_OFFLINE": "1"}, id="GPTOSS_LOCAL_OFFLINE"),
    pytest.param(None, {"HF_HUB_OFFLINE": "1"}, id="HF_HUB_OFFLINE"),
]


@pytest.fixture
def pulls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tiny_gguf: Path, rtx_4090: None) -> Path:
    """The stand-in Ollama on PATH with no models; returns the file its pull requests go to."""
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    install(tmp_path, monkeypatch, tiny_gguf)
    log = tmp_path / "pulls.log"
    monkeypatch.setenv("FAKE_OLLAMA_PULL_LOG", str(log))
    monkeypatch.setenv("FAKE_OLLAMA_MODELS", "")
    return log


def switch_on(monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)


@pytest.mark.parametrize(("flag", "env"), SWITCHES)
def test_pull_backend_ollama_asks_for_no_download(
    pulls: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    flag: str | None,
    env: dict[str, str],
) -> None:
    switch_on(monkeypatch, env)
    argv = ["pull", "--backend", "ollama", "20b", *([flag] if flag else [])]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "offline mode is on" in err and "gpt-oss:20b" in err
    assert not pulls.exists() or pulls.read_text() == ""


def test_offline_pull_backend_ollama_accepts_a_tag_ollama_has(
    pulls: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FAKE_OLLAMA_MODELS", "gpt-oss:20b")
    assert main(["pull", "--backend", "ollama", "--offline", "20b"]) == 0
    out, err = capsys.readouterr()
    assert out.strip() == "gpt-oss:20b" and "not checked for a newer version" in err
    assert not pulls.exists() or pulls.read_text() == ""


@pytest.mark.parametrize(("flag", "env"), SWITCHES[1:])
def test_the_chat_opener_does_not_pull_a_missing_tag(
    pulls: Path, monkeypatch: pytest.MonkeyPatch, flag: str | None, env: dict[str, str]
) -> None:
    from gptoss_local.launch.runner import ollama_opener

    switch_on(monkeypatch, env)
    with pytest.raises(BackendError, match="offline mode is on") as failed:
        ollama_opener("gpt-oss:20b", 4096)(lambda *_: True)
    assert failed.value.kind == "offline"
    assert not pulls.exists() or pulls.read_text() == ""


@pytest.mark.parametrize(("flag", "env"), SWITCHES[1:])
def test_the_first_run_download_opens_no_connection(
    monkeypatch: pytest.MonkeyPatch, rtx_4090: None, flag: str | None, env: dict[str, str]
) -> None:
    import socket
    import threading

    switch_on(monkeypatch, env)
    attempts: list[object] = []

    def refuse(*args: object, **kwargs: object) -> None:
        attempts.append(args)
        raise OSError("the test blocks the network")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    setup = Preparation(hardware.probe(), catalog.load(), config.Settings(), Wishes(), True)
    with pytest.raises(OfflineError, match="offline mode is on"):
        setup.download(catalog.load().model("20b"), lambda _p: None, threading.Event())
    assert attempts == []
