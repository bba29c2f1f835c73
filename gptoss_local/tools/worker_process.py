"""The python worker's process from the outside: its environment and command line, the threads
that read its pipes, and its end, which takes every process the code started with it."""

from __future__ import annotations

import collections
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any

from gptoss_local.tools.errors import ToolsError
from gptoss_local.tools.pids_group import PidsGroup
from gptoss_local.tools.sandbox import Sandbox

KEEPER_SECONDS = 3.0  # for the keeper to kill the code's processes before it is killed
LINUX = sys.platform.startswith("linux")


def start(
    argv: list[str], sandbox: Sandbox, scratch: Path, memory: int, group: PidsGroup | None
) -> subprocess.Popen[bytes]:
    """Start `argv` in `sandbox` (and in `group`, where there is one), in a session of its own.

    Raises:
        ToolsError: It cannot be started.
    """
    command, cwd = sandbox.command(argv, scratch, memory)
    if group is not None:
        command = group.wrap(command)
    try:
        return subprocess.Popen(
            command, cwd=cwd, env=worker_env(sandbox, scratch),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=os.name == "posix",
        )  # fmt: skip
    except OSError as exc:
        raise ToolsError(f"cannot start the python tool ({command[0]}): {exc}") from None


def end(proc: subprocess.Popen[bytes], sandbox: Sandbox, group: PidsGroup | None) -> None:
    """Kill the worker and every process the code started, also those that left its session."""
    if LINUX and sandbox.kind == "none" and proc.poll() is None:
        # No PID namespace: the keeper (a subreaper) kills its descendants, then exits.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            proc.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(KEEPER_SECONDS)
    try:
        if os.name == "posix":
            # The sandbox and its process group; with unshare the PID namespace's init is in
            # it, and the kernel kills the whole namespace when that dies (bwrap: likewise).
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()
    if group is not None:
        group.remove()  # whatever is left, e.g. after code killed the keeper
    if proc.stdin is not None:
        with contextlib.suppress(OSError):
            proc.stdin.close()
    # stdout and stderr are closed by their readers at EOF: closing them here would wait for a
    # read that a surviving process (one that forked without exec) could hold open.


def exit_text(code: int | None, sandbox: Sandbox) -> str:
    """How the worker ended, in words."""
    if code is not None and code > 128 and LINUX and sandbox.kind != "bwrap":
        code = 128 - code  # the keeper passes a signal on as 128 + its number
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def reader(
    stream: IO[bytes], put: Any, keep: collections.deque[str] | None = None
) -> threading.Thread:
    """A thread that reads `stream` line by line: JSON replies to `put` (None at the end), or
    text into `keep`; it closes the stream at the end."""

    def loop() -> None:
        try:
            for line in stream:
                if keep is not None:
                    keep.append(line.decode("utf-8", "replace"))
                else:
                    try:
                        put(json.loads(line))
                    except ValueError:
                        continue
        except (OSError, ValueError):
            pass
        stream.close()
        if put is not None:
            put(None)

    thread = threading.Thread(target=loop, name="python-tool-reader", daemon=True)
    thread.start()
    return thread


def worker_env(sandbox: Sandbox, scratch: Path) -> dict[str, str]:
    """A clean environment: nothing of ours (no keys or tokens) reaches the model's code."""
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": sandbox.folder(scratch),
        "LANG": "C.UTF-8",
        "MPLBACKEND": "Agg",  # charts go to files; there is no display
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    # The memory limit counts address space reserved, not used: thread pools of numerical
    # libraries (a buffer per core) and glibc's per-thread arenas reserve a lot on big machines.
    threads = str(min(4, os.cpu_count() or 1))
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[name] = threads
    env["MALLOC_ARENA_MAX"] = "2"
    if os.name == "nt":
        for name in ("SYSTEMROOT", "PATH", "TEMP", "TMP", "USERPROFILE"):
            if name in os.environ:
                env[name] = os.environ[name]
    if sandbox.kind != "none":
        env["TMPDIR"] = "/tmp"  # an empty tmpfs of its own
    elif "TMPDIR" in os.environ:
        env["TMPDIR"] = os.environ["TMPDIR"]
    return env
