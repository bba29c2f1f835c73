"""`engine_start = "background"`: the first `run` that needs the model starts `serve` in the
background and answers through it, the next one finds it (one copy loaded), and after the
engine is killed the next `run` starts a new one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from serve_helpers import until

from gptoss_local.serve.find_engine import Engine, find_engine
from gptoss_local.serve.runtime_file import pid_alive

Cli = Callable[..., tuple[int, str, str]]


@pytest.fixture
def background(isolated_home: Path) -> Iterator[None]:
    """The setting on; whatever engine the test started is ended afterwards."""
    settings = isolated_home / "config" / "settings.toml"
    settings.parent.mkdir(parents=True)
    settings.write_text('engine_start = "background"\n')
    yield
    found = find_engine()
    if found is not None:
        os.kill(found.record.pid, signal.SIGKILL)


def run_once(cli: Cli, gguf: Path) -> tuple[int, str, str]:
    return cli("run", "--model-path", str(gguf), "--context", "2048", "--max-tokens", "4", "hi")


def engine() -> Engine:
    found = find_engine()
    assert found is not None and not found.starting
    return found


def test_the_first_run_starts_the_engine_and_the_next_one_uses_it(
    tiny_gguf: Path, cli: Cli, background: None, isolated_home: Path
) -> None:
    code, _out, err = run_once(cli, tiny_gguf)
    assert code == 0, err
    assert "starting the engine in the background" in err
    first = engine()
    assert first.record.pid != os.getpid() and first.record.key  # a key of its own
    code, _out, err = run_once(cli, tiny_gguf)
    assert code == 0, err
    assert "starting the engine" not in err and "using the engine at" in err
    assert engine().record.pid == first.record.pid
    assert engine().state["loads"] == 1  # both answers from one copy
    assert "serving" in (isolated_home / "logs" / "engine.log").read_text()


def test_a_killed_engine_is_started_again_by_the_next_run(
    tiny_gguf: Path, cli: Cli, background: None
) -> None:
    assert run_once(cli, tiny_gguf)[0] == 0
    killed = engine().record.pid
    os.kill(killed, signal.SIGKILL)
    until(lambda: not pid_alive(killed), "the engine to end")
    code, _out, err = run_once(cli, tiny_gguf)
    assert code == 0, err
    assert "starting the engine in the background" in err
    assert engine().record.pid != killed


def test_without_the_setting_run_loads_its_own_copy(tiny_gguf: Path, cli: Cli) -> None:
    code, _out, err = run_once(cli, tiny_gguf)
    assert code == 0, err
    assert "engine" not in err and find_engine() is None


def test_two_runs_at_the_same_moment_start_one_engine(
    tiny_gguf: Path, background: None, isolated_home: Path
) -> None:
    command = [sys.executable, "-m", "gptoss_local", "run", "--model-path", str(tiny_gguf),
               "--context", "2048", "--max-tokens", "4", "hi"]  # fmt: skip
    runs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)]  # fmt: skip
    ended = [run.communicate(timeout=300) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], ended
    assert engine().state["loads"] == 1
    log = (isolated_home / "logs" / "engine.log").read_text()
    assert log.count("serving tiny") == 1, log  # a second serve, if any, gave way unloaded
