"""Files brought into a chat in a real terminal (tmux) on the tiny model: by `@` completion and
by the file picker (Ctrl+G), an image refused, and the attachments shown again when the chat is
reopened; what was sent is saved with the message."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from terminal_helpers import exported_chat, open_session, pane, quit_chat, until

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")


def _keys(session: str, *keys: str) -> None:
    subprocess.run(["tmux", "send-keys", "-t", session, *keys], check=True)


def _type(session: str, text: str) -> None:
    subprocess.run(["tmux", "send-keys", "-t", session, "-l", text], check=True)


def _users(env: dict[str, str]) -> list[dict]:
    return [m for m in exported_chat(env).get("messages", []) if m["role"] == "user"]


def _chat(folder: Path, model: Path, marker: Path, *extra: str) -> str:
    args = " ".join(extra)
    return (f"cd {folder} && {sys.executable} -m gptoss_local chat --model-path {model} "
            f"--context 2048 {args}; echo $? > {marker}")  # fmt: skip


def test_files_are_attached_by_completion_and_by_the_picker(
    tiny_gguf: Path, isolated_home: Path, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    (work / "data").mkdir(parents=True)
    (work / "notes.md").write_text("# Notes\nthe meeting is on Tuesday\n", encoding="utf-8")
    (work / "data" / "report.txt").write_text("sales went up\n", encoding="utf-8")
    (work / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    session = f"gptoss-test-{uuid.uuid4().hex[:8]}"
    marker = tmp_path / "exit-code"
    env = {**os.environ, "GPTOSS_LOCAL_HOME": str(isolated_home), "TERM": "xterm-256color"}
    open_session(session, _chat(work, tiny_gguf, marker), env, ("GPTOSS_LOCAL_HOME",))
    try:
        until(lambda: "llamacpp" in pane(session), "the chat with the model loaded", 60, session)
        _type(session, "what is in @no")
        until(lambda: "notes.md" in pane(session), "the completion menu", 15, session)
        _keys(session, "Tab")
        until(lambda: "@notes.md" in pane(session), "the completed path", 15, session)
        _keys(session, "Enter")
        until(lambda: len(_users(env)) == 1, "the message with its file", 30, session)
        (sent,) = _users(env)
        assert sent["content"].rstrip() == "what is in @notes.md"
        assert [a["name"] for a in sent["attachments"]] == ["notes.md"]
        assert "the meeting is on Tuesday" in sent["attachments"][0]["text"]
        until(lambda: "📄 notes.md" in pane(session), "the file under the message", 15, session)

        _keys(session, "C-g")  # the picker: a path typed, then Enter
        until(lambda: "report.txt" in pane(session) or "data" in pane(session), "the picker",
              15, session)  # fmt: skip
        _type(session, "photo.png")
        _keys(session, "Enter")
        until(lambda: "reads text only" in pane(session), "the image refused", 15, session)
        _keys(session, "C-g")
        until(lambda: "data" in pane(session), "the picker again", 15, session)
        _type(session, "data/report.txt")
        _keys(session, "Enter")
        until(lambda: "report.txt ·" in pane(session), "the chip", 15, session)
        _type(session, "and this one")
        _keys(session, "Enter")
        until(lambda: len(_users(env)) == 2, "the second message", 60, session)
        second = _users(env)[1]
        assert [a["name"] for a in second["attachments"]] == ["data/report.txt"]
        quit_chat(session, marker)
        chat_id = exported_chat(env)["chat"]["id"]
        marker.unlink()
        reopen = _chat(work, tiny_gguf, marker, f"--chat {chat_id}")
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
        open_session(session, reopen, env, ("GPTOSS_LOCAL_HOME",))
        until(lambda: "📄 notes.md" in pane(session) and "report.txt" in pane(session),
              "the attachments of the reopened chat", 60, session)  # fmt: skip
        quit_chat(session, marker)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
