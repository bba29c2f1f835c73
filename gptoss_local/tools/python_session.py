"""One stateful python worker process: started when first needed, killed on a time-out.

The worker (`python_worker.py`) runs in the best sandbox found (`sandbox.py`) with a clean
environment, an address-space limit, a cap on its processes (a pids cgroup where one can be
made, else RLIMIT_NPROC, which binds everyone but root), and its scratch folder as working
directory; ending it ends every process the code started (`worker_process.py`). Requests and
replies are JSON lines; a reader thread turns replies into a queue, so a call can wait with a
deadline and a cancel event instead of blocking on the pipe.
"""

from __future__ import annotations

import collections
import json
import os
import queue
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gptoss_local import paths
from gptoss_local.tools import pids_group
from gptoss_local.tools.errors import ToolsError
from gptoss_local.tools.pids_group import PidsGroup, open_group
from gptoss_local.tools.sandbox import Sandbox, detect
from gptoss_local.tools.worker_process import LINUX, end, exit_text, reader, start

WORKER_SOURCE = Path(__file__).with_name("python_worker.py")
START_SECONDS = 20.0  # a cold start of the interpreter in a sandbox on a slow disk
HEAD_BYTES, TAIL_BYTES = 8_192, 6_144  # of the code's output kept per call
PROCESS_LIMIT = 256  # processes and threads of one worker, itself included
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
        self.processes_limited: bool | None = None  # likewise
        self._group: PidsGroup | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._replies: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._stderr: collections.deque[str] = collections.deque(maxlen=40)
        self._lock = threading.Lock()

    @property
    def processes_capped(self) -> bool:
        """Whether the cap on processes holds: as the worker reported, or as expected (the
        kernel exempts root from RLIMIT_NPROC, so root needs a pids cgroup)."""
        if self.processes_limited is not None:
            return self.processes_limited
        root = getattr(os, "getuid", lambda: -1)() == 0
        return LINUX and (not root or pids_group.possible())

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
        memory = self.memory_mb * 1024 * 1024
        config = {
            "memory": memory, "head": HEAD_BYTES, "tail": TAIL_BYTES, "processes": PROCESS_LIMIT,
            "keeper": LINUX and self.sandbox.kind != "bwrap",  # bwrap has its own init
        }  # fmt: skip
        source = WORKER_SOURCE.read_text(encoding="utf-8")
        argv = [sys.executable, "-I", "-X", "utf8", "-c", source, json.dumps(config)]
        self._replies, self._stderr = queue.Queue(), collections.deque(maxlen=40)
        self._group = open_group(PROCESS_LIMIT) if LINUX else None
        self._proc = start(argv, self.sandbox, self.scratch, memory, self._group)
        assert self._proc.stdout is not None and self._proc.stderr is not None
        reader(self._proc.stdout, self._replies.put)
        reader(self._proc.stderr, None, self._stderr)
        status, ready = self._wait(time.monotonic() + START_SECONDS, cancel)
        if status != "reply" or not ready or not ready.get("ready"):
            self._kill()
            tail = "".join(self._stderr).strip()[-2000:] or "no error output"
            raise ToolsError(f"the python tool did not start ({self.sandbox.kind}): {tail}")
        self.memory_limited = bool(ready.get("memory_limited"))
        self.processes_limited = self._group is not None or bool(ready.get("processes_limited"))

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
        return exit_text(code, self.sandbox)

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        group, self._group = self._group, None
        if proc is not None:
            end(proc, self.sandbox, group)


def _cell(reply: dict[str, Any]) -> CellOutput:
    head, tail, cut = str(reply.get("head", "")), str(reply.get("tail", "")), int(reply["cut"])
    text = head + (f"\n[… {cut:,} bytes of output cut …]\n" if cut else "") + tail
    return CellOutput(text, bool(reply.get("error")), cut)
