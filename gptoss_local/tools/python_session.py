"""One stateful python worker process: started when first needed, killed on a time-out.

The worker (`python_worker.py`) runs in the best sandbox found (`sandbox.py`) with a clean
environment, an address-space limit, and its scratch folder as working directory. Requests and
replies are JSON lines; a reader thread turns replies into a queue, so a call can wait with a
deadline and a cancel event instead of blocking on the pipe.
"""

from __future__ import annotations

import collections
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from gptoss_local import paths
from gptoss_local.tools.errors import ToolsError
from gptoss_local.tools.sandbox import Sandbox, detect

WORKER_SOURCE = Path(__file__).with_name("python_worker.py")
START_SECONDS = 20.0  # a cold start of the interpreter in a sandbox on a slow disk
HEAD_BYTES, TAIL_BYTES = 8_192, 6_144  # of the code's output kept per call
_POLL = 0.05


@dataclass(frozen=True)
class CellOutput:
    """What one call printed (its start and end when long), and how it ended."""

    text: str
    error: bool = False
    cut_bytes: int = 0
    restarted: bool = False  # the worker was killed or died: its state is gone


class PythonSession:
    """A worker process that keeps its namespace between `run` calls.

    Args:
        scratch: The folder the code works in (created if missing).
        timeout: Seconds one call may take; then the worker is killed and restarted.
        memory_mb: Address-space limit of the worker in MiB (0: none).
        sandbox: How to isolate it; default the best this computer offers.
    """

    def __init__(
        self,
        scratch: Path,
        *,
        timeout: float = 30.0,
        memory_mb: int = 4096,
        sandbox: Sandbox | None = None,
    ) -> None:
        self.scratch, self.timeout, self.memory_mb = scratch, timeout, memory_mb
        self.sandbox = sandbox or detect()
        self.memory_limited: bool | None = None  # known once a worker has started
        self._proc: subprocess.Popen[bytes] | None = None
        self._replies: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._stderr: collections.deque[str] = collections.deque(maxlen=40)
        self._lock = threading.Lock()

    @property
    def running(self) -> bool:
        """Whether a worker process is alive (holding state)."""
        return self._proc is not None and self._proc.poll() is None

    def run(self, code: str, cancel: threading.Event | None = None) -> CellOutput:
        """Run `code` in the session; starts the worker when there is none.

        Raises:
            ToolsError: The worker cannot be started (the message has its error output).
        """
        with self._lock:
            if not self.running:
                self._start(cancel)
            assert self._proc is not None and self._proc.stdin is not None
            try:
                self._proc.stdin.write(json.dumps({"code": code}).encode() + b"\n")
                self._proc.stdin.flush()
            except OSError:
                return self._lost("The python session ended before it could run the code")
            status, reply = self._wait(time.monotonic() + self.timeout, cancel)
            if status == "timeout":
                return self._lost(f"Timed out after {self.timeout:g} seconds")
            if status == "cancelled":
                return self._lost("Stopped by the user")
            if status == "died" or reply is None:
                return self._lost(f"The python session ended unexpectedly ({self._exit_text()})")
            return _cell(reply)

    def close(self) -> None:
        """Stop the worker (its state is gone; the scratch folder stays)."""
        with self._lock:
            self._kill()

    # -- the process ---------------------------------------------------------------------

    def _start(self, cancel: threading.Event | None) -> None:
        paths.ensure_dir(self.scratch)
        config = {"memory": self.memory_mb * 1024 * 1024, "head": HEAD_BYTES, "tail": TAIL_BYTES}
        source = WORKER_SOURCE.read_text(encoding="utf-8")
        argv = [sys.executable, "-I", "-X", "utf8", "-c", source, json.dumps(config)]
        command, cwd = self.sandbox.command(argv, self.scratch)
        self._replies, self._stderr = queue.Queue(), collections.deque(maxlen=40)
        try:
            self._proc = subprocess.Popen(
                command, cwd=cwd, env=worker_env(self.sandbox, self.scratch),
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                start_new_session=os.name == "posix",
            )  # fmt: skip
        except OSError as exc:
            raise ToolsError(f"cannot start the python tool ({command[0]}): {exc}") from None
        assert self._proc.stdout is not None and self._proc.stderr is not None
        _reader(self._proc.stdout, self._replies.put)
        _reader(self._proc.stderr, None, self._stderr)
        status, ready = self._wait(time.monotonic() + START_SECONDS, cancel)
        if status != "reply" or not ready or not ready.get("ready"):
            self._kill()
            tail = "".join(self._stderr).strip()[-2000:] or "no error output"
            raise ToolsError(f"the python tool did not start ({self.sandbox.kind}): {tail}")
        self.memory_limited = bool(ready.get("memory_limited"))

    def _wait(
        self, deadline: float, cancel: threading.Event | None
    ) -> tuple[str, dict[str, Any] | None]:
        while True:
            try:
                reply = self._replies.get(timeout=_POLL)
            except queue.Empty:
                if cancel is not None and cancel.is_set():
                    return "cancelled", None
                if time.monotonic() >= deadline:
                    return "timeout", None
                continue
            return ("died", None) if reply is None else ("reply", reply)

    def _lost(self, why: str) -> CellOutput:
        self._kill()
        text = (
            f"{why}. The python session was restarted: variables, imports and definitions "
            f"from earlier calls are gone (files in {self.sandbox.folder(self.scratch)} remain)."
        )
        return CellOutput(text, error=True, restarted=True)

    def _exit_text(self) -> str:
        code = self._proc.wait(timeout=5) if self._proc is not None else None
        if code is not None and code < 0:
            try:
                return f"killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"killed by signal {-code}"
        return f"exit code {code}"

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            if os.name == "posix":
                os.killpg(proc.pid, signal.SIGKILL)  # the sandbox and whatever the code started
            else:
                proc.kill()
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def _cell(reply: dict[str, Any]) -> CellOutput:
    head, tail, cut = str(reply.get("head", "")), str(reply.get("tail", "")), int(reply["cut"])
    text = head + (f"\n[… {cut:,} bytes of output cut …]\n" if cut else "") + tail
    return CellOutput(text, bool(reply.get("error")), cut)


def _reader(
    stream: IO[bytes], put: Any, keep: collections.deque[str] | None = None
) -> threading.Thread:
    """A thread that reads `stream` line by line: JSON replies to `put` (None at the end), or
    text into `keep`."""

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
        except (OSError, ValueError):  # closed under us by _kill
            pass
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
    if sandbox.kind == "bwrap":
        env["TMPDIR"] = "/tmp"  # an empty tmpfs of its own
    elif "TMPDIR" in os.environ:
        env["TMPDIR"] = os.environ["TMPDIR"]
    return env
