"""The browser in the chat, in a real terminal (tmux): the steered tiny model searches the
user's folder, the app asks before the call, opens the first result, and the answer shows its
citation as the file and line; the saved chat keeps it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from library_helpers import write_corpus
from terminal_helpers import exported_chat, open_session, pane, quit_chat, until

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
APP = Path(__file__).parent / "browser_chat_app.py"


def test_the_model_browses_the_folder_and_cites_a_file(
    tiny_gguf: Path, isolated_home: Path, tmp_path: Path
) -> None:
    notes = write_corpus(tmp_path / "notes", 20)
    session = f"gptoss-test-{uuid.uuid4().hex[:8]}"
    marker = tmp_path / "exit-code"
    command = f"{sys.executable} {APP} {tiny_gguf} {notes}; echo $? > {marker}"
    env = {**os.environ, "GPTOSS_LOCAL_HOME": str(isolated_home), "TERM": "xterm-256color"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(APP.parents[2]), env.get("PYTHONPATH")]))
    open_session(session, command, env, ("GPTOSS_LOCAL_HOME", "PYTHONPATH"))
    try:
        until(lambda: "llamacpp" in pane(session), "the chat with the model loaded", 90, session)
        subprocess.run(["tmux", "send-keys", "-t", session, "-l", "Why do zebras have stripes?"],
                       check=True)  # fmt: skip
        subprocess.run(["tmux", "send-keys", "-t", session, "Enter"], check=True)
        asked = "The model wants to call browser.search"
        until(lambda: asked in pane(session), "the question about the search", 120, session)
        subprocess.run(["tmux", "send-keys", "-t", session, "a"], check=True)  # always, here
        until(lambda: "notes/notes/zebras.md:4" in pane(session), "the cited file", 180, session)
        shown = pane(session)
        assert "Their stripes deter biting flies" in shown and "【1†L3】" not in shown
        assert "Sources:" in shown and "browser.open" in shown
        assert "wants to call browser.open" not in shown  # "always" covered the whole browser
        quit_chat(session, marker)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
    doc = exported_chat(env)
    answer = doc["messages"][-1]
    assert answer["content"] == "Their stripes deter biting flies 【1†L3】."
    (citation,) = answer["citations"]
    assert citation["path"] == str(notes.resolve() / "notes" / "zebras.md")
    assert (citation["first_line"], citation["last_line"]) == (4, 4)
