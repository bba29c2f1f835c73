"""Helpers of the tests that drive `gptoss-local chat` in a real terminal (tmux)."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable


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
