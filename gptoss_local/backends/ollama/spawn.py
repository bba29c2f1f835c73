"""Start a child that cannot outlive us: its own process group, plus a parent-death signal on Linux
and a kill-on-close job object on Windows (`win_job`).

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

from gptoss_local.backends.ollama import win_job

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


_CREATE_NEW_PROCESS_GROUP = 0x200  # subprocess's constant, which exists on Windows only


def spawn(
    args: list[str],
    env: dict[str, str],
    log: IO[bytes],
    platform: str = sys.platform,
    popen: Any = subprocess.Popen,
    kernel32: Any = None,
) -> subprocess.Popen[bytes]:
    """Start `args` with stdout and stderr to `log`, tied to this process's life.

    Args:
        args: The program and its arguments.
        env: Its whole environment.
        log: An open binary file for its output.
        platform: A `sys.platform` value (tests pass "win32" to run the Windows path).
        popen: `subprocess.Popen` or a stand-in (Windows path only).
        kernel32: kernel32 or a stand-in, for the job object (Windows path only).

    Returns:
        The running process.

    Raises:
        OSError: When it cannot start.
    """
    kwargs: dict[str, Any] = {
        "args": args, "env": env, "stdin": subprocess.DEVNULL, "stdout": log,
        "stderr": subprocess.STDOUT,
    }  # fmt: skip
    if platform == "win32":
        kwargs["creationflags"] = getattr(
            subprocess, "CREATE_NEW_PROCESS_GROUP", _CREATE_NEW_PROCESS_GROUP
        )
        return _spawn_in_job(kwargs, log, popen, kernel32)
    kwargs["start_new_session"] = True  # own group: a Ctrl-C in our terminal does not reach it
    if not platform.startswith("linux"):
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


def _spawn_in_job(kwargs: dict[str, Any], log: IO[bytes], popen: Any, kernel32: Any) -> Any:
    """Windows: start the child and put it into our kill-on-close job object.

    Where Windows refuses (an old Windows whose job for us forbids nesting), the daemon still
    runs and is stopped at a normal exit; the log says that a killed gptoss-local leaves it.
    """
    process = popen(**kwargs)
    try:
        win_job.tie_to_us(int(process._handle), kernel32)
    except OSError as exc:
        log.write(f"--- not tied to gptoss-local ({exc}): it outlives a killed gptoss-local\n"
                  .encode())  # fmt: skip
        log.flush()
    return process
