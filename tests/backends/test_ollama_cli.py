"""`run`, `pull` and `doctor` with the Ollama backend, against the stand-in `ollama`."""

from __future__ import annotations

import json
import sys
from argparse import Namespace
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from fake_ollama.helpers import gone, install, running_fake
from installed_cli import Cli
from tui_helpers import open_history, send_and_wait, wait_for_model

from gptoss_local import catalog, config
from gptoss_local.backends.base import GenerationSettings
from gptoss_local.backends.ollama import daemon as ollama_daemon
from gptoss_local.backends.ollama import spawn as ollama_spawn
from gptoss_local.backends.ollama.probe import free_port
from gptoss_local.hardware import machine as hardware
from gptoss_local.launch.preparation import Preparation
from gptoss_local.plan.wishes import wishes_from
from gptoss_local.tui.app import make_app

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the stand-in needs a shebang")


@pytest.fixture
def program(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tiny_gguf: Path, rtx_4090: None
) -> Path:
    path = tmp_path / "last-request.json"
    monkeypatch.setenv("FAKE_OLLAMA_RECORD", str(path))
    return install(tmp_path, monkeypatch, tiny_gguf)


def test_run_with_the_ollama_backend_streams_and_stops_its_daemon(
    program: Path,
    tmp_path: Path,
    cli: Cli,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    started: list[int] = []
    real = ollama_spawn.spawn

    def spawn(*args: Any) -> Any:
        process = real(*args)
        started.append(process.pid)
        return process

    monkeypatch.setattr(ollama_spawn, "spawn", spawn)
    code, out, err = cli("run", "--backend", "ollama", "--json", "--effort", "low", "hi")
    assert code == 0, err
    assert len(started) == 1 and gone(started[0])
    records = [json.loads(line) for line in out.splitlines()]
    assert "".join(r["text"] for r in records if r["type"] == "answer") == "Hello there"
    assert records[-1]["type"] == "done" and records[-1]["stats"]["generated_tokens"] > 0
    sent = json.loads((tmp_path / "last-request.json").read_text())
    assert sent["model"] == "gpt-oss:20b" and sent["think"] == "low"
    assert sent["options"]["num_ctx"] == 131072  # the plan's context for an RTX 4090
    log = (tmp_path / "gptoss-home" / "logs" / "ollama.log").read_text()
    assert "Listening on" in log


def test_run_refuses_a_model_path_with_ollama(program: Path, cli: Cli, tiny_gguf: Path) -> None:
    code, _, err = cli("run", "--backend", "ollama", "--model-path", str(tiny_gguf), "x")
    assert code == 2 and "llama.cpp backend only" in err


def test_pull_with_the_ollama_backend(program: Path, cli: Cli) -> None:
    code, out, err = cli("pull", "--backend", "ollama", "120b")
    assert code == 0, err
    assert out.strip() == "gpt-oss:120b" and "100%" in err


def test_a_failed_ollama_pull_exits_2(
    program: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_OLLAMA_PULL_FAIL", "1")
    code, _, err = cli("pull", "--backend", "ollama", "120b")
    assert code == 2 and "max retries exceeded" in err


def test_doctor_shows_a_running_ollama_and_its_gpt_oss_tags(
    program: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = free_port()
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{port}")
    with running_fake(program, port, FAKE_OLLAMA_MODELS="gpt-oss:20b,llama3:8b"):
        doc = json.loads(cli("doctor", "--json")[1])
        text = cli("doctor")[1]
    assert set(doc) == {"gpus", "ram", "disk", "engine", "plan"}
    status = doc["engine"]["ollama"]
    assert status["installed"] and status["running"] and status["version"] == "0.12.3"
    assert status["supports_gpt_oss"] is True and status["gpt_oss_tags"] == ["gpt-oss:20b"]
    assert f"Ollama 0.12.3 running at 127.0.0.1:{port}  ·  gpt-oss tags: gpt-oss:20b" in text


def test_doctor_without_ollama(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch, rtx_4090: None
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{free_port()}")
    monkeypatch.setattr(ollama_daemon, "_install_locations", lambda: [])
    doc = json.loads(cli("doctor", "--json")[1])
    assert doc["engine"]["ollama"]["installed"] is False
    assert doc["engine"]["ollama"]["running"] is False
    assert "Ollama: not installed" in cli("doctor")[1]


def test_doctor_opens_no_connection_without_ollama(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    from gptoss_local.backends.ollama.status import ollama_status

    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    monkeypatch.setattr(ollama_daemon, "_install_locations", lambda: [])
    monkeypatch.setattr(socket, "create_connection", lambda *a, **k: pytest.fail("connected"))
    status = ollama_status()
    assert status["installed"] is False and status["running"] is False


async def test_the_chat_tui_streams_through_the_ollama_backend(
    program: Path, tmp_path: Path
) -> None:
    settings = replace(config.load(), backend="ollama")
    wishes = wishes_from(Namespace(), settings)
    prep = Preparation(hardware.probe(), catalog.load(), settings, wishes, first_run=False)
    wishes = prep.initial()
    backend = prep.ready(wishes, prep.plan(wishes)).open(lambda *_: True)
    history = open_history(tmp_path)
    try:
        app = make_app(history, lambda _progress: backend, GenerationSettings(effort="low"))
        async with app.run_test() as pilot:
            await wait_for_model(pilot)
            await send_and_wait(pilot, "hi", timeout=120)
        chat = history.get_chat(app.chat_screen.state.chat_id or 0)
        user, answer = history.messages(chat.id)
        assert (user.content, answer.content, answer.status) == ("hi", "Hello there", "complete")
        assert answer.reasoning == "The user says hi" and chat.backend == "ollama"
    finally:
        backend.close()
        history.close()


@pytest.mark.parametrize("has_it", [True, False])
def test_the_chat_opener_pulls_only_what_ollama_lacks(
    program: Path, monkeypatch: pytest.MonkeyPatch, has_it: bool
) -> None:
    from gptoss_local.launch.runner import ollama_opener

    monkeypatch.setenv("FAKE_OLLAMA_MODELS", "gpt-oss:20b" if has_it else "")
    reports: list[tuple[float, str]] = []
    backend = ollama_opener("gpt-oss:20b", 4096)(lambda f, what: reports.append((f, what)) or True)
    try:
        assert backend.has_model() and backend.context == 4096
    finally:
        backend.close()
    assert reports[0] == (0.0, "starting Ollama")
    pulls = [f for f, what in reports if what == "Ollama is downloading gpt-oss:20b"]
    assert (not pulls) if has_it else (pulls[-1] == 1.0 and len(pulls) >= 3)
