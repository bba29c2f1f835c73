"""One engine per machine, through the real commands: `serve` claims the runtime file, `run`
answers through it (one copy loaded), `ps` shows it, `stop` ends it, a second `serve` or
another model is refused, and a killed engine leaves a stale file the next look cleans."""

from __future__ import annotations

import json
import os
import shutil
import signal
import threading
from collections.abc import Callable
from pathlib import Path

from resident_helpers import get_json, post
from serve_helpers import serve_process

from gptoss_local.commands.resident import engine_rows
from gptoss_local.serve.find_engine import Engine, find_engine
from gptoss_local.serve.runtime_file import EngineRecord, claim, read_record, runtime_path
from gptoss_local.serve.service import ENGINE_PATH

Cli = Callable[..., tuple[int, str, str]]


def test_run_answers_through_the_engine_with_one_copy_loaded(
    tiny_gguf: Path, isolated_home: Path, cli: Cli
) -> None:
    with serve_process(tiny_gguf, isolated_home, "--api-key", "k3y") as served:
        found = find_engine()
        assert found is not None and found.record.pid == served.process.pid
        assert found.record.key == "k3y" and found.state["loads"] == 1
        code, out, err = cli("run", "--model-path", str(tiny_gguf), "--max-tokens", "4", "hi")
        assert code == 0, err
        assert "using the engine at" in err and "using the engine" not in out
        code, out, err = cli("run", "--model-path", str(tiny_gguf), "--max-tokens", "4",
                             "--json", "hi")  # fmt: skip
        assert code == 0, err
        assert all(json.loads(line) for line in out.splitlines())  # its JSON lines only
        answers: list[int] = []
        clients = [threading.Thread(target=lambda: answers.append(post(served.port, "k3y")))
                   for _ in range(2)]  # fmt: skip
        for client in clients:
            client.start()
        for client in clients:
            client.join(60)
        assert answers == [200, 200]
        state = get_json(served.port, ENGINE_PATH, "k3y")
        assert state["loads"] == 1  # every answer came from the one copy
        refused = get_json(served.port, ENGINE_PATH)  # without the key: nothing to read
        assert refused["error"]["code"] == "invalid_api_key" and "instance" not in refused
        assert "POST /v1/chat/completions 200" in served.log()


def test_run_offers_python_through_the_engine_and_runs_it_here(
    tiny_gguf: Path, isolated_home: Path, cli: Cli
) -> None:
    with serve_process(tiny_gguf, isolated_home) as served:
        code, out, err = cli("run", "--model-path", str(tiny_gguf), "--allow-tool", "python",
                             "--max-tokens", "4", "--json", "hi")  # fmt: skip
        plain = cli("run", "--model-path", str(tiny_gguf), "--max-tokens", "4", "--json", "hi")
        state = get_json(served.port, ENGINE_PATH)
        log = served.log()
    assert code == 0, err
    assert "using the engine at" in err and "do not reach the model" not in err
    done, without = json.loads(out.splitlines()[-1]), json.loads(plain[1].splitlines()[-1])
    assert done["type"] == without["type"] == "done"
    # The engine's prompt held the python tool (its description), the plain one did not.
    assert done["stats"]["prompt_tokens"] > without["stats"]["prompt_tokens"] + 50
    assert "POST /v1/chat/completions 200" in log and state["loads"] == 1  # no second copy


def test_another_model_is_refused_not_loaded_beside(
    tiny_gguf: Path, isolated_home: Path, cli: Cli, tmp_path: Path
) -> None:
    other = tmp_path / "other.gguf"
    shutil.copyfile(tiny_gguf, other)
    with serve_process(tiny_gguf, isolated_home):
        code, out, err = cli("run", "--model-path", str(other), "--max-tokens", "4", "hi")
        assert code != 0 and out == ""
        assert "holds tiny, not other" in err and "gptoss-local stop" in err


def test_a_second_serve_is_refused_naming_the_first(
    tiny_gguf: Path, isolated_home: Path, cli: Cli
) -> None:
    with serve_process(tiny_gguf, isolated_home) as served:
        code, _out, err = cli("serve", "--model-path", str(tiny_gguf), "--port", "0")
        assert code != 0
        assert f"PID {served.process.pid} serves tiny" in err
        assert find_engine() is not None  # the first one's file is left as it was


def test_an_unshared_serve_runs_beside_the_engine_unseen(
    tiny_gguf: Path, isolated_home: Path, tmp_path: Path
) -> None:
    with serve_process(tiny_gguf, isolated_home) as engine_serve:
        other = tmp_path / "other.gguf"
        shutil.copyfile(tiny_gguf, other)
        with serve_process(other, isolated_home, "--unshared") as beside:
            assert post(beside.port, model="other") == 200  # a second model, on purpose
            found = find_engine()
            assert found is not None and found.record.pid == engine_serve.process.pid
        assert find_engine() is not None  # its end leaves the engine's file alone


def test_ps_shows_the_engine_and_stop_ends_it(
    tiny_gguf: Path, isolated_home: Path, cli: Cli
) -> None:
    with serve_process(tiny_gguf, isolated_home, "--keep-alive", "forever") as served:
        code, out, _err = cli("ps")
        assert code == 0
        assert "tiny" in out and str(served.process.pid) in out and "never" in out
        assert "RAM " in out and "VRAM" not in out  # on the CPU: no VRAM to show
        code, out, _err = cli("ps", "--json")
        engine = json.loads(out)["engine"]
        assert engine["pid"] == served.process.pid and "key" not in engine
        assert engine["state"]["loaded"] is True
        code, _out, err = cli("stop")
        assert code == 0, err
        assert served.process.wait(30) == 0
        assert "stopping" in served.log()
    assert not runtime_path().exists()  # removed by the clean stop
    code, _out, err = cli("stop")
    assert code == 1 and "no engine runs" in err
    code, out, err = cli("ps", "--json")
    assert code == 0 and json.loads(out) == {"engine": None}


def test_a_killed_engine_leaves_a_stale_file_that_the_next_look_cleans(
    tiny_gguf: Path, isolated_home: Path, cli: Cli
) -> None:
    with serve_process(tiny_gguf, isolated_home) as served:
        served.process.send_signal(signal.SIGKILL)
        served.process.wait(30)
        assert read_record() is not None  # left behind
    assert find_engine() is None
    assert not runtime_path().exists()
    with serve_process(tiny_gguf, isolated_home) as again:  # the next one starts
        found = find_engine()
        assert found is not None and found.record.pid == again.process.pid


def test_on_demand_loads_nothing_until_the_first_request(
    tiny_gguf: Path, isolated_home: Path
) -> None:
    with serve_process(tiny_gguf, isolated_home, "--load", "on-demand") as served:
        state = get_json(served.port, ENGINE_PATH)
        assert state["loaded"] is False and state["loads"] == 0
        assert state["model"] == "tiny" and state["context"] == 2048
        assert post(served.port) == 200
        state = get_json(served.port, ENGINE_PATH)
        assert state["loaded"] is True and state["loads"] == 1
        assert "let go after 5 min 0 s without a request" in served.log()


def test_an_engine_that_starts_is_shown_and_not_signalled(cli: Cli) -> None:
    claim(EngineRecord("", os.getpid(), "tiny", None))  # this process: never to be signalled
    code, out, _err = cli("ps")
    assert code == 0 and "starting" in out and str(os.getpid()) in out
    code, _out, err = cli("stop")
    assert code == 1 and "still starting" in err


def test_ps_names_who_runs_and_who_waits() -> None:
    state = {"loaded": True, "memory": {"vram": 3 << 30, "ram": 1 << 30}, "expires_at": None,
             "running": [{"client": "gptoss-local run", "since": 0}],
             "waiting": [{"client": "", "since": 0}]}  # fmt: skip
    record = EngineRecord("http://127.0.0.1:1/v1", 42, "gpt-oss-20b", None)
    heading, row = engine_rows(Engine(record, state))
    shown = dict(zip(heading, row, strict=True))
    assert shown["MEMORY"] == "VRAM 3.0 GiB, RAM 1.0 GiB" and shown["UNLOADS"] == "in use"
    assert shown["USED BY"] == "gptoss-local run (running), ? (waiting)"
