"""A long chat in a real terminal (tmux) on the tiny model with a 1,024-token context: it goes on
past its context, with a marker where the prompts start now, saved and shown again on reopening;
and a message too large for any context goes back to the input box instead of sticking."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from terminal_helpers import exported_chat, open_session, pane, quit_chat, until

from gptoss_local import config

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
MARKER = "left out of the prompt"  # or "summarised", when the random model wrote a summary


def _send(session: str, text: str) -> None:
    subprocess.run(["tmux", "send-keys", "-t", session, "-l", text], check=True)
    subprocess.run(["tmux", "send-keys", "-t", session, "Enter"], check=True)


def _answered(env: dict[str, str], users: int) -> bool:
    """Whether the chat has `users` user messages and the reply to the last has ended."""
    messages = exported_chat(env).get("messages", [])
    sent = sum(m["role"] == "user" for m in messages)
    return sent == users and messages[-1]["role"] != "user" and messages[-1]["status"] != "partial"


def test_a_chat_past_its_context_is_compacted_and_goes_on(
    tiny_gguf: Path, isolated_home: Path, tmp_path: Path
) -> None:
    config.save(config.Settings(effort="low"))  # a reply keeps 256 of the 1,024 tokens
    session = f"gptoss-test-{uuid.uuid4().hex[:8]}"
    marker = tmp_path / "exit-code"
    command = (f"{sys.executable} -m gptoss_local chat --model-path {tiny_gguf} --context 1024; "
               f"echo $? > {marker}")  # fmt: skip
    env = {**os.environ, "GPTOSS_LOCAL_HOME": str(isolated_home), "TERM": "xterm-256color"}
    open_session(session, command, env, ("GPTOSS_LOCAL_HOME",))
    try:
        until(lambda: "llamacpp" in pane(session), "the chat with the model loaded", 60, session)
        sent = 0
        while not exported_chat(env).get("compactions"):
            assert sent < 12, "no compaction after 12 long messages:\n" + pane(session)
            sent += 1
            _send(session, f"message {sent}: " + "tell me about the weather " * 25)
            until(lambda n=sent: _answered(env, n), f"the reply to message {sent}", 120, session)
        until(lambda: MARKER in pane(session) or "summarised" in pane(session), "the marker", 30,
              session)  # fmt: skip
        _send(session, "and after the compaction?")
        until(lambda: _answered(env, sent + 1), "the reply after the compaction", 120, session)
        quit_chat(session, marker)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
    doc = exported_chat(env)
    (compaction,) = doc["compactions"][-1:]
    assert compaction["messages_left_out"] >= 2
    users = [m["content"] for m in doc["messages"] if m["role"] == "user"]
    assert users[-1] == "and after the compaction?" and users[0].startswith("message 1:")
    assert not any(m["status"] == "failed" for m in doc["messages"])
