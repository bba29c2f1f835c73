"""Switching the engine's model (`POST /gptoss-local/engine/switch`): the serve lets its model
go and loads the other in the same process (address, key and APIs kept), the runtime file and
the model lists follow; never while a reply runs (409 naming who), one switch at a time."""

from __future__ import annotations

import argparse
import os
import pty
import select
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from engine_helpers import open_tiny
from resident_helpers import get_json, post, resident_server, send
from serve_helpers import serve_process, until

from gptoss_local import config
from gptoss_local.backends.base import Backend
from gptoss_local.commands.serve_switch import ServeSwitcher
from gptoss_local.plan.wishes import Wishes
from gptoss_local.serve.find_engine import find_engine
from gptoss_local.serve.resident import ResidentBackend
from gptoss_local.serve.runtime_file import read_record
from gptoss_local.serve.switch import Choice
from gptoss_local.urls import ENGINE_PATH, SWITCH_PATH

Cli = Callable[..., tuple[int, str, str]]


def _copy(tiny_gguf: Path, folder: Path, name: str) -> Path:
    other = folder / f"{name}.gguf"
    shutil.copyfile(tiny_gguf, other)
    return other


def _switcher(tiny_gguf: Path) -> ServeSwitcher:
    """`serve`'s own resolver, as `serve --model-path tiny.gguf --context 2048` makes it."""
    wishes = Wishes(model_path=tiny_gguf, context=2048)
    return ServeSwitcher(argparse.Namespace(parallel=None), config.load(), wishes)


def test_a_switch_loads_the_other_model_in_the_same_serve(
    tiny_gguf: Path, isolated_home: Path, tmp_path: Path
) -> None:
    other = _copy(tiny_gguf, tmp_path, "other")
    with serve_process(tiny_gguf, isolated_home, "--api-key", "k3y") as served:
        before = read_record()
        status, body = send(served.port, SWITCH_PATH, {"model_path": str(other)})
        assert status == 401  # the key, as on every route
        status, body = send(served.port, SWITCH_PATH, {"model_path": str(other)}, "k3y")
        assert status == 200, body
        assert body["switched"] is True and body["previous"] == "tiny"
        assert body["model"] == "other" and body["loaded"] is True
        state = get_json(served.port, ENGINE_PATH, "k3y")
        assert state["model"] == "other" and state["loads"] == 2  # one copy after the other
        record = read_record()
        assert record is not None and before is not None
        assert record.model == "other" and record.url == before.url and record.key == "k3y"
        assert record.instance == before.instance and record.pid == served.process.pid
        found = find_engine()
        assert found is not None and found.names[0] == "other"
        models = [m["id"] for m in get_json(served.port, "/v1/models", "k3y")["data"]]
        assert models == ["other"]
        tags = [m["name"] for m in get_json(served.port, "/api/tags", "k3y")["models"]]
        assert tags and all(t.startswith("other") for t in tags)
        assert post(served.port, "k3y", model="other") == 200
        assert post(served.port, "k3y", model="tiny") == 404  # let go
        status, body = send(served.port, SWITCH_PATH, {"model_path": str(other)}, "k3y")
        assert status == 200 and body["switched"] is False and body["loads"] == 2
        assert "switched to other" in served.log()


def test_an_unknown_model_or_a_bad_body_is_a_clear_4xx_and_changes_nothing(
    tiny_gguf: Path, isolated_home: Path, tmp_path: Path
) -> None:
    with serve_process(tiny_gguf, isolated_home) as served:
        status, body = send(served.port, SWITCH_PATH, {"model": "gpt-oss-7b"})
        assert status == 404 and body["error"]["code"] == "model_not_found"
        assert "gpt-oss-7b" in body["error"]["message"]
        missing = tmp_path / "missing.gguf"
        status, body = send(served.port, SWITCH_PATH, {"model_path": str(missing)})
        assert status == 422 and body["error"]["param"] == "model_path"
        status, body = send(served.port, SWITCH_PATH, {"model": "tiny", "model_path": "x"})
        assert status == 400
        status, body = send(served.port, SWITCH_PATH, ["tiny"])
        assert status == 400
        state = get_json(served.port, ENGINE_PATH)
        assert state["model"] == "tiny" and state["loads"] == 1


def test_a_switch_is_refused_naming_who_streams_and_their_reply_ends_whole(
    tiny_gguf: Path, isolated_home: Path, tmp_path: Path
) -> None:
    other = _copy(tiny_gguf, tmp_path, "other")
    with resident_server(tiny_gguf, keep_alive=-1, switcher=_switcher(tiny_gguf)) as served:
        replies: list[tuple[int, bytes]] = []
        streaming = threading.Thread(
            target=lambda: replies.append(served.chat("gate", "the editor", stream=True))
        )
        streaming.start()
        assert served.gate.started.wait(60)
        status, body = send(served.port, SWITCH_PATH, {"model_path": str(other)})
        assert status == 409 and body["error"]["code"] == "model_in_use"
        assert "the editor (running)" in body["error"]["message"]
        served.gate.open.set()
        streaming.join(60)
        ((code, data),) = replies
        assert code == 200 and b"data: [DONE]" in data  # the reply ended whole
        assert served.state()["model"] == "tiny" and served.resident.loads == 1
        status, body = send(served.port, SWITCH_PATH, {"model_path": str(other)})
        assert status == 200 and body["model"] == "other"  # once nobody uses it


class HeldLoad(ServeSwitcher):
    """`serve`'s resolver, whose loads wait for `release` (so a test knows one is under way)."""

    def __init__(self, tiny_gguf: Path) -> None:
        base = _switcher(tiny_gguf)
        super().__init__(base.args, base.settings, base.wishes)
        self.release = threading.Event()

    def resolve(self, model: str | None, model_path: str | None) -> Choice:
        choice = super().resolve(model, model_path)

        def opener() -> Backend:
            assert self.release.wait(60), "the test never let the load go on"
            return choice.opener()

        return replace(choice, opener=opener)


def test_of_two_switches_at_once_one_wins_and_the_other_is_told(
    tiny_gguf: Path, isolated_home: Path, tmp_path: Path
) -> None:
    first, second = _copy(tiny_gguf, tmp_path, "first"), _copy(tiny_gguf, tmp_path, "second")
    switcher = HeldLoad(tiny_gguf)
    with resident_server(tiny_gguf, keep_alive=-1, switcher=switcher) as served:
        answers: list[tuple[int, dict[str, Any]]] = []
        winner = threading.Thread(
            target=lambda: answers.append(
                send(served.port, SWITCH_PATH, {"model_path": str(first)})
            )
        )
        winner.start()
        until(lambda: served.state()["switching"] == "first", "the first switch to load")
        status, body = send(served.port, SWITCH_PATH, {"model_path": str(second)})
        assert status == 409 and body["error"]["code"] == "switch_in_progress"
        assert "already switching to first" in body["error"]["message"]
        assert post(served.port, model="tiny") == 503  # a reply meanwhile: try again shortly
        switcher.release.set()
        winner.join(120)
        assert [status for status, _body in answers] == [200]
        state = served.state()
        assert state["model"] == "first" and state["switching"] is None
        assert served.resident.loads == 2 and state["loaded"] is True


def test_run_switch_answers_through_the_engine_switched_to_its_model(
    tiny_gguf: Path, isolated_home: Path, tmp_path: Path, cli: Cli
) -> None:
    other = _copy(tiny_gguf, tmp_path, "other")
    with serve_process(tiny_gguf, isolated_home, "--api-key", "k3y") as served:
        code, _out, err = cli("run", "--model-path", str(other), "--switch", "--max-tokens",
                             "4", "hi")  # fmt: skip
        assert code == 0, err
        assert "switching the engine to other" in err and "using the engine at" in err
        state = get_json(served.port, ENGINE_PATH, "k3y")
        assert state["model"] == "other" and state["loads"] == 2  # no copy in `run` itself
        record = read_record()
        assert record is not None and record.model == "other"
        assert "POST /gptoss-local/engine/switch 200" in served.log()


def test_run_without_a_terminal_refuses_and_names_the_flag(
    tiny_gguf: Path, isolated_home: Path, tmp_path: Path, cli: Cli
) -> None:
    other = _copy(tiny_gguf, tmp_path, "other")
    with serve_process(tiny_gguf, isolated_home) as served:
        code, out, err = cli("run", "--model-path", str(other), "--max-tokens", "4", "hi")
        assert code != 0 and out == ""
        assert "holds tiny, not other" in err and "--switch" in err
        state = get_json(served.port, ENGINE_PATH)
        assert state["model"] == "tiny" and state["loads"] == 1


def test_run_on_a_terminal_asks_before_it_switches(
    tiny_gguf: Path, isolated_home: Path, tmp_path: Path
) -> None:
    other = _copy(tiny_gguf, tmp_path, "other")
    with serve_process(tiny_gguf, isolated_home) as served:
        said, code = _on_a_terminal(isolated_home, ["--model-path", str(other)], "n")
        assert "holds tiny" in said and "Switch the engine to other? [y/N]" in said
        assert code != 0 and get_json(served.port, ENGINE_PATH)["model"] == "tiny"
        said, code = _on_a_terminal(isolated_home, ["--model-path", str(other)], "y")
        assert code == 0, said
        assert get_json(served.port, ENGINE_PATH)["model"] == "other"


def _on_a_terminal(home: Path, flags: list[str], answer: str) -> tuple[str, int]:
    """`run` with its stdin and stderr on a terminal (a pty), answering the question with
    `answer`; what the terminal showed, and the exit code."""
    leader, follower = pty.openpty()
    command = [sys.executable, "-m", "gptoss_local", "run", *flags, "--max-tokens", "4", "hi"]
    env = {**os.environ, "GPTOSS_LOCAL_HOME": str(home)}
    process = subprocess.Popen(command, env=env, stdin=follower, stderr=follower,
                               stdout=subprocess.DEVNULL)  # fmt: skip
    os.close(follower)
    shown, answered = b"", False
    try:
        while True:
            ready, _w, _x = select.select([leader], [], [], 120)
            assert ready, "run said nothing on its terminal"
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the terminal closed: run ended
                break
            if not chunk:
                break
            shown += chunk
            if not answered and b"[y/N]" in shown:
                os.write(leader, answer.encode() + b"\n")
                answered = True
        return shown.decode(errors="replace"), process.wait(120)
    finally:
        os.close(leader)
        if process.poll() is None:
            process.kill()


def test_a_prefill_gives_way_to_a_switch(tiny_gguf: Path, tmp_path: Path) -> None:
    other = _copy(tiny_gguf, tmp_path, "other")
    resident = ResidentBackend(lambda: open_tiny(tiny_gguf), keep_alive=-1)
    stopped = threading.Event()  # the prefill's cancel, as `engine_routes.prefill` holds it

    def prefill() -> None:
        with resident.hold(client="a chat") as holder:
            holder.running, holder.gives_way = True, stopped
            stopped.wait(60)

    thread = threading.Thread(target=prefill)
    thread.start()
    try:
        until(lambda: bool(resident.state()["running"]), "the prefill to hold the model")
        switched: list[str] = []
        resident.swap("other", lambda: open_tiny(other), {}, lambda: switched.append("done"))
        assert stopped.is_set() and switched == ["done"]  # stopped, not refused
        assert resident.loads == 2 and resident.state()["loaded"] is True
    finally:
        stopped.set()
        thread.join(60)
        resident.close()


def test_a_client_whose_model_was_switched_away_is_told_what_happened(
    tiny_gguf: Path, tmp_path: Path
) -> None:
    from gptoss_local.backends.base import BackendError, GenerationSettings, ReplyRequest
    from gptoss_local.backends.openai.backend import OpenAIClientBackend
    from gptoss_local.conversation import Conversation, Message

    other = _copy(tiny_gguf, tmp_path, "other")
    with resident_server(tiny_gguf, keep_alive=-1, switcher=_switcher(tiny_gguf)) as served:
        client = OpenAIClientBackend(f"http://127.0.0.1:{served.port}/v1", "tiny")
        status, _body = send(served.port, SWITCH_PATH, {"model_path": str(other)})
        assert status == 200
        request = ReplyRequest(Conversation((Message("user", "hi"),)), GenerationSettings())
        try:
            client.stream(request).drain()
        except BackendError as exc:
            error = exc
        else:
            raise AssertionError("the reply of a model let go went through")
    assert "no longer holds this chat's model" in str(error) and "'other'" in str(error)
    assert error.hint is not None and "switched the engine" in error.hint
