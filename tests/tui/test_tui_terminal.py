"""`gptoss-local chat` in a real terminal (tmux): type, see a reply and its stats, quit, find it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from terminal_helpers import open_session, pane, quit_chat, the_saved_chat, until, wait_for_reply

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")


def test_chat_in_a_real_terminal(tiny_gguf: Path, isolated_home: Path, tmp_path: Path) -> None:
    session = f"gptoss-test-{uuid.uuid4().hex[:8]}"
    marker = tmp_path / "exit-code"
    command = (
        f"{sys.executable} -m gptoss_local chat --model-path {tiny_gguf} --context 2048; "
        f"echo $? > {marker}"
    )
    env = {**os.environ, "GPTOSS_LOCAL_HOME": str(isolated_home), "TERM": "xterm-256color"}
    open_session(session, command, env, ("GPTOSS_LOCAL_HOME",))
    try:
        until(lambda: "llamacpp" in pane(session), "the chat with the model loaded", 60, session)
        subprocess.run(["tmux", "send-keys", "-t", session, "hello there", "Enter"], check=True)
        wait_for_reply(session)
        assert "hello there" in pane(session)
        quit_chat(session, marker)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
    chat = the_saved_chat(env)
    assert (chat["title"], chat["messages"], chat["backend"]) == ("hello there", 2, "llamacpp")
