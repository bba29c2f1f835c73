"""`gptoss-local chat` in a real terminal (tmux) beside the machine's engine (`serve`, found
through its runtime file) that another client uses: the chat loads no copy of its own, says
the engine is shared, prefills and answers through it, and the engine loaded the model once."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import pytest
from serve_helpers import serve_process
from terminal_helpers import open_session, pane, quit_chat, the_saved_chat, until, wait_for_reply

from gptoss_local.serve.find_engine import find_engine

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")


def _ask(port: int, answers: list[int]) -> None:
    """A client of the engine: one short chat completion."""
    body = {"model": "tiny", "max_tokens": 16, "messages": [{"role": "user", "content": "x"}]}
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    headers = {"Content-Type": "application/json", "X-Client-Name": "codex"}
    connection.request("POST", "/v1/chat/completions", json.dumps(body), headers)
    response = connection.getresponse()
    response.read()
    connection.close()
    answers.append(response.status)


def test_a_chat_beside_serve_used_by_a_client(
    tiny_gguf: Path, isolated_home: Path, tmp_path: Path
) -> None:
    session = f"gptoss-test-{uuid.uuid4().hex[:8]}"
    marker = tmp_path / "exit-code"
    command = (f"{sys.executable} -m gptoss_local chat --model-path {tiny_gguf}; "
               f"echo $? > {marker}")  # fmt: skip
    env = {**os.environ, "GPTOSS_LOCAL_HOME": str(isolated_home), "TERM": "xterm-256color"}
    with serve_process(tiny_gguf, isolated_home) as served:
        answers: list[int] = []
        try:
            open_session(session, command, env, ("GPTOSS_LOCAL_HOME",))
            until(lambda: "shared engine at" in pane(session), "the shared engine", 60, session)
            client = threading.Thread(target=_ask, args=(served.port, answers))
            client.start()
            subprocess.run(["tmux", "send-keys", "-t", session, "hello there", "Enter"], check=True)
            wait_for_reply(session)
            client.join(120)
            found = find_engine()
            assert found is not None and found.state["loads"] == 1  # one copy, for all
            quit_chat(session, marker)
        finally:
            subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
        log = served.log()
    assert answers == [200]
    # The chat prefilled through the engine (done, or stopped by the message it sent: 499).
    assert "POST /gptoss-local/prefill" in log
    chat = the_saved_chat(env)
    assert (chat["title"], chat["messages"]) == ("hello there", 2)


def test_a_chat_for_another_model_asks_then_switches_the_engine(
    tiny_gguf: Path, isolated_home: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other.gguf"
    shutil.copyfile(tiny_gguf, other)
    session = f"gptoss-test-{uuid.uuid4().hex[:8]}"
    marker = tmp_path / "exit-code"
    command = (f"{sys.executable} -m gptoss_local chat --model-path {other}; "
               f"echo $? > {marker}")  # fmt: skip
    env = {**os.environ, "GPTOSS_LOCAL_HOME": str(isolated_home), "TERM": "xterm-256color"}
    with serve_process(tiny_gguf, isolated_home):
        try:
            open_session(session, command, env, ("GPTOSS_LOCAL_HOME",))
            until(lambda: "Switch the engine" in pane(session), "the offer", 60, session)
            assert "holds tiny" in pane(session)
            found = find_engine()
            assert found is not None and found.state["model"] == "tiny"  # nothing yet
            subprocess.run(["tmux", "send-keys", "-t", session, "y"], check=True)
            until(lambda: "shared engine at" in pane(session), "the shared engine", 60, session)
            found = find_engine()
            assert found is not None and found.record.model == "other"
            assert found.state["loads"] == 2  # the engine's second model, no copy here
            quit_chat(session, marker)
        finally:
            subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
