"""Start a child that cannot outlive us: its own process group, and on Linux a parent-death signal.

PR_SET_PDEATHSIG fires when the *thread* that forked the child exits, not the process. The TUI
opens backends on worker threads, so every spawn runs on one long-lived thread of its own that
lives as long as the process.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
from concurrent.futures import Future
from typing import IO, Any

_PR_SET_PDEATHSIG = 1
_requests: queue.Queue[tuple[Future[subprocess.Popen[bytes]], dict[str, Any]]] = queue.Queue()
_thread: threading.Thread | None = None
_lock = threading.Lock()


def _child_setup(parent: int) -> None:
    """Runs in the child between fork and exec (Linux only)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


def _serve() -> None:
    while True:
        future, kwargs = _requests.get()
        try:
            future.set_result(subprocess.Popen(**kwargs))
        except BaseException as exc:  # handed back to the caller's thread
            future.set_exception(exc)


def spawn(args: list[str], env: dict[str, str], log: IO[bytes]) -> subprocess.Popen[bytes]:
    """Start `args` with stdout and stderr to `log`, tied to this process's life.

    Args:
        args: The program and its arguments.
        env: Its whole environment.
        log: An open binary file for its output.

    Returns:
        The running process.
    """
    kwargs: dict[str, Any] = {
        "args": args, "env": env, "stdin": subprocess.DEVNULL, "stdout": log,
        "stderr": subprocess.STDOUT,
    }  # fmt: skip
    if sys.platform == "win32":
        # Job object (kill on close) not done yet: see ollama_daemon's docstring.
        kwargs["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP  # type: ignore[attr-defined]
        return subprocess.Popen(**kwargs)
    kwargs["start_new_session"] = True  # own group: a Ctrl-C in our terminal does not reach it
    if not sys.platform.startswith("linux"):
        return subprocess.Popen(**kwargs)
    parent = os.getpid()
    kwargs["preexec_fn"] = lambda: _child_setup(parent)
    global _thread
    with _lock:
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_serve, name="ollama-spawner", daemon=True)
            _thread.start()
    future: Future[subprocess.Popen[bytes]] = Future()
    _requests.put((future, kwargs))
    return future.result()
