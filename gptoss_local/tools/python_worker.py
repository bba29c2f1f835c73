"""The python tool's worker: a separate interpreter that runs the model's code, Jupyter-style.

gptoss-local starts it as ``python -I -X utf8 -c <this file's text> <config JSON>`` (inside the
sandbox, where there is one), so it imports nothing from gptoss-local. Requests and replies are
JSON lines on the pipes it was started with; the code's own output (``print``, tracebacks, and
whatever subprocesses write to file descriptors 1 and 2) goes into a pipe that a thread reads,
keeping only the first and last bytes of long output. One namespace lives as long as the
process, so variables, imports and definitions persist between calls; the value of a cell's
last expression is shown as in a notebook.

On Linux (outside bubblewrap, which has its own) the process first forks: the parent stays
behind as the *keeper* of everything the code starts. It is a child subreaper (PID 1 in
unshare's PID namespace), so processes that fork twice and call ``setsid`` are still its
descendants; it reaps them, and when the worker ends or it is sent SIGTERM it kills them all.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import json
import linecache
import os
import signal
import sys
import threading
import traceback
from typing import Any, BinaryIO


class Capture:
    """Reads the code's output from a pipe; each round ends where `marker` comes through."""

    def __init__(self, fd: int, head: int, tail: int, marker: bytes) -> None:
        self._fd, self._head_limit, self._tail_limit, self._marker = fd, head, tail, marker
        self._done: list[tuple[bytes, int, bytes]] = []
        self._ready = threading.Condition()
        self._head, self._tail, self._total = bytearray(), bytearray(), 0

    def _add(self, data: bytes) -> None:
        self._total += len(data)
        room = self._head_limit - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if data and self._tail_limit:
            self._tail += data
            if len(self._tail) > 2 * self._tail_limit:
                del self._tail[: -self._tail_limit]

    def _finish(self) -> None:
        tail = bytes(self._tail[-self._tail_limit :]) if self._tail_limit else b""
        cut = self._total - len(self._head) - len(tail)
        with self._ready:
            self._done.append((bytes(self._head), cut, tail))
            self._ready.notify_all()
        self._head, self._tail, self._total = bytearray(), bytearray(), 0

    def run(self) -> None:
        """The reading thread: until the pipe closes."""
        keep = len(self._marker) - 1  # a marker may arrive split over two reads
        carry = b""
        while chunk := os.read(self._fd, 65536):
            data = carry + chunk
            while (at := data.find(self._marker)) >= 0:
                self._add(data[:at])
                self._finish()
                data = data[at + len(self._marker) :]
            self._add(data[:-keep] if len(data) > keep else b"")
            carry = data[-keep:] if len(data) > keep else data

    def take(self) -> tuple[bytes, int, bytes]:
        """The output of the round that just ended: head, bytes cut, tail."""
        with self._ready:
            while not self._done:
                self._ready.wait()
            return self._done.pop(0)


def limit_memory(limit: int) -> bool:
    """Cap this process's address space at `limit` bytes (for good: soft and hard)."""
    if limit <= 0:
        return False
    try:
        import resource
    except ImportError:  # Windows
        return False
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ValueError, OSError):  # a lower hard limit already, or an OS that refuses
        return False
    return True


def limit_processes(limit: int) -> bool:
    """Cap the processes and threads the code may add at `limit` (RLIMIT_NPROC). The kernel
    counts all of this user's tasks in this user namespace and ignores the cap for root, so
    the cap is set above what runs now, and False means it is not enforced."""
    if limit <= 0 or not sys.platform.startswith("linux") or _outer_uid() == 0:
        return False
    import resource

    uid, running = os.getuid(), 0
    for name in os.listdir("/proc"):  # in a new user namespace: only the sandbox's
        with contextlib.suppress(OSError, ValueError):
            if name.isdigit() and os.stat(f"/proc/{name}").st_uid == uid:
                with open(f"/proc/{name}/status", encoding="ascii", errors="replace") as status:
                    running += int(next(ln for ln in status if ln.startswith("Threads:"))[8:])
    _, hard = resource.getrlimit(resource.RLIMIT_NPROC)
    cap = running + limit if hard == resource.RLIM_INFINITY else min(running + limit, hard)
    try:
        resource.setrlimit(resource.RLIMIT_NPROC, (cap, cap))
    except (ValueError, OSError):
        return False
    return True


def _outer_uid() -> int:
    """Who we are outside any user namespace (root inside unshare's may be you outside)."""
    uid = os.getuid()
    with contextlib.suppress(OSError, ValueError), open("/proc/self/uid_map") as lines:
        for line in lines:
            inside, outside, count = (int(word) for word in line.split())
            if inside <= uid < inside + count:
                return outside + uid - inside
    return uid


def _descendants(root: int) -> list[int]:
    """Every process below `root`, from the parent links in /proc."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            if name.isdigit():
                with open(f"/proc/{name}/stat", "rb") as stat:
                    ppid = int(stat.read().rsplit(b")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(name))
    found, todo = [], [root]
    while todo:
        kids = children.get(todo.pop(), [])
        found += kids
        todo += kids
    return found


def _kill_descendants() -> None:
    """SIGKILL everything below the keeper (repeatedly: a fork loop races the first round)."""
    for _ in range(200):
        pids = _descendants(os.getpid())
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0]:  # orphans are ours to reap
                pass


def keep(worker: int) -> int:
    """The keeper's life: reap everything, and when the worker ends (or SIGTERM comes) kill
    what the code left behind. Returns the worker's exit status as an exit code."""
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER

    def stop(signum: int, frame: object) -> None:
        _kill_descendants()
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            return 1
        if pid == worker:
            _kill_descendants()
            return 128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else status >> 8


def run_cell(code: str, namespace: dict[str, Any], number: int) -> bool:
    """Run one cell in `namespace`; True when it raised (the traceback was printed)."""
    name = f"<cell {number}>"
    linecache.cache[name] = (len(code), None, code.splitlines(True), name)
    try:
        tree = ast.parse(code, name, "exec")
    except (SyntaxError, ValueError) as exc:
        sys.stderr.write("".join(traceback.format_exception_only(type(exc), exc)))
        return True
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    try:
        exec(compile(tree, name, "exec"), namespace)
        if last is not None:  # "single" mode shows the value through sys.displayhook
            exec(compile(ast.Interactive([last]), name, "single"), namespace)
    except BaseException:  # SystemExit and KeyboardInterrupt too: the session goes on
        kind, value, trace = sys.exc_info()
        inner = trace.tb_next if trace is not None else None  # the user's frames only
        sys.stderr.write("".join(traceback.format_exception(kind, value, inner)))
        return True
    return False


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def _serve(requests: BinaryIO, replies: BinaryIO, capture: Capture, marker: bytes) -> None:
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    stdout, stderr = sys.stdout, sys.stderr
    for number, line in enumerate(requests, start=1):
        code = json.loads(line)["code"]
        failed = run_cell(code, namespace, number)
        sys.stdout, sys.stderr = stdout, stderr  # the cell may have replaced them
        for stream in (stdout, stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        os.write(1, marker)
        head, cut, tail = capture.take()
        reply = {"head": _text(head), "cut": cut, "tail": _text(tail), "error": failed}
        replies.write(json.dumps(reply).encode() + b"\n")
        replies.flush()


def main() -> None:
    """Set up the pipes and limits, say ready, then run cells until the requests end."""
    config = json.loads(sys.argv[1])
    if config.get("keeper") and (worker := os.fork()):
        sys.exit(keep(worker))
    requests = os.fdopen(os.dup(0), "rb")
    replies = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    read_end, write_end = os.pipe()
    os.dup2(write_end, 1)
    os.dup2(write_end, 2)
    os.close(write_end)
    marker = b"\x00\x1egptoss-local:" + os.urandom(8).hex().encode() + b"\x1e\x00"
    capture = Capture(read_end, config["head"], config["tail"], marker)
    threading.Thread(target=capture.run, daemon=True).start()
    options = {"encoding": "utf-8", "errors": "backslashreplace", "closefd": False}
    sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - lives as long as we do
    sys.stdout = open(1, "w", buffering=1, **options)  # type: ignore[call-overload]  # noqa: SIM115
    sys.stderr = open(2, "w", buffering=1, **options)  # type: ignore[call-overload]  # noqa: SIM115
    limited = limit_memory(int(config["memory"]))
    capped = limit_processes(int(config.get("processes", 0)))
    ready = {"ready": True, "memory_limited": limited, "processes_limited": capped,
             "python": sys.version.split()[0]}  # fmt: skip
    replies.write(json.dumps(ready).encode() + b"\n")
    replies.flush()
    _serve(requests, replies, capture, marker)


if __name__ == "__main__":
    main()
