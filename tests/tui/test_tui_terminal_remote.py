"""`gptoss-local chat --backend openai` in a real terminal (tmux), against a real
`gptoss-local serve` of the tiny model on loopback: the chat opens without a model of its own,
streams a reply with its stats, and saves the chat as one of that engine."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from terminal_helpers import open_session, pane, quit_chat, the_saved_chat, until, wait_for_reply

from gptoss_local.backends.ollama.probe import free_port

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")


def test_chat_with_a_server_elsewhere(tiny_gguf: Path, isolated_home: Path, tmp_path: Path) -> None:
    port = free_port()
    server_env = {**os.environ, "GPTOSS_LOCAL_HOME": str(tmp_path / "server-home")}
    serve = [sys.executable, "-m", "gptoss_local", "serve", "--model-path", str(tiny_gguf),
             "--context", "2048", "--port", str(port)]  # fmt: skip
    session = f"gptoss-test-{uuid.uuid4().hex[:8]}"
    marker = tmp_path / "exit-code"
    url = f"http://127.0.0.1:{port}/v1"
    command = (
        f"{sys.executable} -m gptoss_local chat --backend openai --base-url {url}; "
        f"echo $? > {marker}"
    )
    env = {**os.environ, "GPTOSS_LOCAL_HOME": str(isolated_home), "TERM": "xterm-256color"}
    with subprocess.Popen(serve, env=server_env, stderr=subprocess.PIPE, text=True) as server:
        try:
            assert server.stderr is not None
            for line in server.stderr:
                if line.startswith("serving"):
                    break
            open_session(session, command, env, ("GPTOSS_LOCAL_HOME",))
            until(lambda: "openai" in pane(session), "the chat with the server", 60, session)
            subprocess.run(["tmux", "send-keys", "-t", session, "hello there", "Enter"], check=True)
            wait_for_reply(session)
            quit_chat(session, marker)
        finally:
            subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
            server.terminate()
            server.wait(30)
    chat = the_saved_chat(env)
    assert (chat["title"], chat["messages"], chat["backend"]) == ("hello there", 2, "openai")
