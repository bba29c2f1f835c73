"""The installed command's first run in a real terminal (tmux): from nothing to chatting.

The manifest (GPTOSS_LOCAL_MANIFEST) lists the tiny real model under a small shape, served by
the loopback file server; the test presses Enter on "Download … and start", chats, quits, and
starts again to find the chat opening without a question.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from first_run_helpers import FILE, MODEL
from http_fixture import FileServer
from store_files import REPO
from terminal_helpers import open_session, pane, quit_chat, until, wait_for_reply

from gptoss_local import config

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")

TINY_SHAPE = {  # small enough to plan onto any CI machine; the file is the tiny test model
    "layers": 2, "hidden": 64, "heads": 4, "kv_heads": 1, "head_dim": 16, "experts": 4,
    "experts_used": 2, "vocab": 201088, "sliding_window": 128, "context_max": 4096,
    "params_total": 20_000_000, "params_active": 10_000_000, "kv_bytes_per_token": 128,
    "expert_layer_bytes": 40_000, "token_embd_bytes": 30_000_000,
    "decode_bytes_per_token": 10_000_000,
}  # fmt: skip


def _manifest(path: Path, server: FileServer, data: bytes) -> Path:
    import hashlib

    shape = "\n".join(f"{k} = {v}" for k, v in TINY_SHAPE.items())
    path.write_text(f"""schema = 1

[sources.main]
url = "{server.url("main")}"

[models.{MODEL}]
aliases = ["tiny"]
repo = "{REPO}"
revision = "abc123"
license = "Apache-2.0"
ollama_tag = "x"

[[models.{MODEL}.files]]
name = "{FILE}"
bytes = {len(data)}
sha256 = "{hashlib.sha256(data).hexdigest()}"

[models.{MODEL}.shape]
{shape}
""")
    return path


def _start(session: str, env: dict[str, str], marker: Path) -> None:
    command = f"{sys.executable} -m gptoss_local chat; echo $? > {marker}"
    keep = ("GPTOSS_LOCAL_HOME", "GPTOSS_LOCAL_MANIFEST")
    open_session(session, command, env, keep, "150x50")


def test_first_run_in_a_real_terminal(
    http_server: FileServer, tiny_gguf: Path, isolated_home: Path, tmp_path: Path
) -> None:
    data = tiny_gguf.read_bytes()
    http_server.files[FILE] = data
    manifest = _manifest(tmp_path / "manifest.toml", http_server, data)
    env = {**os.environ, "GPTOSS_LOCAL_HOME": str(isolated_home), "TERM": "xterm-256color",
           "GPTOSS_LOCAL_MANIFEST": str(manifest)}  # fmt: skip
    session = f"gptoss-first-{uuid.uuid4().hex[:8]}"
    marker = tmp_path / "exit-1"
    _start(session, env, marker)
    try:
        asks = lambda: all(t in pane(session) for t in ("Welcome", "to download into", "Download"))  # noqa: E731
        until(asks, "the first-run screen and its download question", 60, session)
        subprocess.run(["tmux", "send-keys", "-t", session, "Enter"], check=True)
        # "·  llamacpp": the status bar (the plan on the first-run screen names it too)
        until(lambda: "·  llamacpp" in pane(session), "the download and the load", 90, session)
        subprocess.run(["tmux", "send-keys", "-t", session, "hello there", "Enter"], check=True)
        wait_for_reply(session)
        quit_chat(session, marker)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
    assert (isolated_home / "models" / FILE).read_bytes() == data
    os.environ["GPTOSS_LOCAL_HOME"] = str(isolated_home)  # read the settings it wrote
    assert config.load().model == MODEL
    marker = tmp_path / "exit-2"
    session += "-again"
    _start(session, env, marker)
    try:  # the second run asks nothing: the chat screen loads the remembered model
        until(lambda: "·  llamacpp" in pane(session), "the chat, model loaded", 60, session)
        assert "Welcome to gptoss-local" not in pane(session)
        quit_chat(session, marker)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
