"""Helpers of the tests that drive `gptoss-local chat` in a real terminal (tmux)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from gptoss_local.tui.reply_view import NO_ANSWER

REPO = Path(__file__).parents[2]


def open_session(
    session: str, command: str, env: dict[str, str], keep: tuple[str, ...], size: str = "120x35"
) -> None:
    """Run `command` in a new detached tmux `session` of `size` columns x rows, from the repo,
    with the variables named in `keep` taken from `env` (tmux's server may hold another env)."""
    width, height = size.split("x")
    exports = [a for name in keep for a in ("-e", f"{name}={env[name]}")]
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", width, "-y", height,
                    *exports, command], check=True, env=env, cwd=REPO)  # fmt: skip


def pane(session: str) -> str:
    """What the tmux `session` shows now."""
    done = subprocess.run(["tmux", "capture-pane", "-p", "-t", session],
                          capture_output=True, text=True, check=True)  # fmt: skip
    return done.stdout


def until(
    condition: Callable[[], bool], what: str, timeout: float = 60.0, session: str | None = None
) -> None:
    """Poll `condition` until it holds; on a timeout the error shows the pane, if named."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            screen = f"; the terminal shows:\n{pane(session)}" if session else ""
            raise AssertionError(f"timed out waiting for {what}{screen}")
        time.sleep(0.1)  # polling a condition with a deadline, not a fixed wait


def wait_for_reply(session: str, timeout: float = 60.0) -> None:
    """Wait until the reply has ended: its rate in the status bar, or the transcript's "no answer"
    (a random-weight model may end its reply at its first token, which leaves no rate to show)."""
    ended = lambda: any(t in pane(session) for t in ("tok/s", NO_ANSWER))  # noqa: E731
    until(ended, "the end of the reply", timeout, session)


def quit_chat(session: str, marker: Path) -> None:
    """Ctrl+Q, then wait for the exit code the session's command writes to `marker`: 0."""
    subprocess.run(["tmux", "send-keys", "-t", session, "C-q"], check=True)
    until(lambda: marker.exists() and marker.read_text().strip() != "", "the app to quit", 60,
          session)  # fmt: skip
    assert marker.read_text().strip() == "0", pane(session)


def the_saved_chat(env: dict[str, str]) -> dict:
    """The one chat `gptoss-local chats --json` lists."""
    listed = subprocess.run([sys.executable, "-m", "gptoss_local", "chats", "--json"], env=env,
                            capture_output=True, text=True, check=True)  # fmt: skip
    (chat,) = json.loads(listed.stdout)["chats"]
    return dict(chat)


def exported_chat(env: dict[str, str]) -> dict:
    """The newest chat as `gptoss-local chats export --format json` writes it ({} before any
    chat exists)."""
    listed = subprocess.run([sys.executable, "-m", "gptoss_local", "chats", "--json"], env=env,
                            capture_output=True, text=True, check=True)  # fmt: skip
    chats = json.loads(listed.stdout)["chats"]
    if not chats:
        return {}
    done = subprocess.run([sys.executable, "-m", "gptoss_local", "chats", "export",
                           str(chats[0]["id"]), "--format", "json"], env=env,
                          capture_output=True, text=True, check=True)  # fmt: skip
    return dict(json.loads(done.stdout))
