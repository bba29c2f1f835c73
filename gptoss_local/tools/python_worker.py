"""The python tool's worker: a separate interpreter that runs the model's code, Jupyter-style.

gptoss-local starts it as ``python -I -X utf8 -c <this file's text> <config JSON>`` (inside the
sandbox, where there is one), so it imports nothing from gptoss-local. Requests and replies are
JSON lines on the pipes it was started with; the code's own output (``print``, tracebacks, and
whatever subprocesses write to file descriptors 1 and 2) goes into a pipe that a thread reads,
keeping only the first and last bytes of long output. One namespace lives as long as the
process, so variables, imports and definitions persist between calls; the value of a cell's
last expression is shown as in a notebook.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import json
import linecache
import os
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
    ready = {"ready": True, "memory_limited": limited, "python": sys.version.split()[0]}
    replies.write(json.dumps(ready).encode() + b"\n")
    replies.flush()
    _serve(requests, replies, capture, marker)


if __name__ == "__main__":
    main()
