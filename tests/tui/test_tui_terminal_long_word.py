"""A saved chat holding a 30,000-letter word reopens in a real terminal (tmux) and goes on."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from terminal_helpers import open_session, pane, quit_chat, until, wait_for_reply

from gptoss_local.session.history import History

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")


def test_a_chat_with_a_30000_letter_word_reopens(
    roomy_gguf: Path, isolated_home: Path, tmp_path: Path
) -> None:
    # Before: the message was saved, then tokenizing it overflowed llama.cpp's stack; reopening
    # the chat segfaulted every time (exit 139, the terminal left garbled).
    with History() as history:
        chat = history.create_chat("long word")
        history.add_user_message(chat.id, "the" * 10_000)
    session = f"gptoss-test-{uuid.uuid4().hex[:8]}"
    marker = tmp_path / "exit-code"
    command = (f"{sys.executable} -m gptoss_local chat --model-path {roomy_gguf} "
               f"--context 16384 --chat {chat.id}; echo $? > {marker}")  # fmt: skip
    env = {**os.environ, "GPTOSS_LOCAL_HOME": str(isolated_home), "TERM": "xterm-256color"}
    open_session(session, command, env, ("GPTOSS_LOCAL_HOME",))
    try:
        until(lambda: "llamacpp" in pane(session), "the chat with the model loaded", 60, session)
        subprocess.run(["tmux", "send-keys", "-t", session, "and now", "Enter"], check=True)
        wait_for_reply(session)
        quit_chat(session, marker)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
