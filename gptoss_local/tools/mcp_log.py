"""The log of one MCP server (``logs/mcp-NAME.log``): capped, rotated, and fed by its stderr and
by what the MCP SDK says about it.

A server writing straight into a file could fill the disk (one reached 300 MB in a call), so
its stderr is a pipe that a thread copies into a `CappedLog`: at `LOG_BYTES` the file becomes
``mcp-NAME.log.1`` (the one before is dropped) and a new one starts. The SDK logs through the
standard `logging` module, a traceback per stdout line that is not JSON-RPC; with no handler
set, Python prints those on the terminal. `route_sdk_logs` sends them to the log of the server
whose task logged them (a context variable the task sets, inherited by the SDK's own tasks).
"""

from __future__ import annotations

import codecs
import contextvars
import logging
import os
import threading
from pathlib import Path
from typing import TextIO

LOG_BYTES = 2 * 1024 * 1024  # per file; with the one old file kept, 4 MiB per server at most
_CHUNK = 64 * 1024
# The SDK's loggers: its modules log under "mcp."; its client session logs as "client".
_SDK_LOGGERS = ("mcp", "client")
_current: contextvars.ContextVar[CappedLog | None] = contextvars.ContextVar(
    "mcp_server_log", default=None
)


class CappedLog:
    """A text log of at most `max_bytes` per file, keeping one older file (``NAME.1``).

    Thread-safe: the stderr thread and the event loop's SDK records write to it together.
    """

    def __init__(self, path: Path, max_bytes: int = LOG_BYTES) -> None:
        self.path, self.max_bytes = path, max_bytes
        self._lock = threading.Lock()
        self._rotate_old()  # the previous session's log is kept as .1
        self._file: TextIO | None = path.open("w", encoding="utf-8", errors="replace")
        self._size = 0

    def write(self, text: str) -> None:
        """Append `text`, starting a new file whenever this one is full (lines may split)."""
        data = text.encode("utf-8", "replace")
        with self._lock:
            while data and self._file is not None:
                room = self.max_bytes - self._size
                part, data = data[:room], data[room:]
                self._file.write(part.decode("utf-8", "replace"))
                self._file.flush()
                self._size += len(part)
                if self._size >= self.max_bytes:
                    self._file.close()
                    self._rotate_old()
                    self._file = self.path.open("w", encoding="utf-8", errors="replace")
                    self._size = 0

    def close(self) -> None:
        """Close the file; later writes are dropped."""
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None

    def _rotate_old(self) -> None:
        try:
            if self.path.stat().st_size:
                os.replace(self.path, self.path.with_name(self.path.name + ".1"))
        except OSError:  # none yet, or held open elsewhere (Windows): write over it
            pass


class StderrPump:
    """A pipe for a server's stderr (`writer`, given to the SDK) copied into `log` by a thread.

    Close `writer` once the server has started: the server holds its own end, and the thread
    ends (closing the log) when the last holder closes it.
    """

    def __init__(self, log: CappedLog) -> None:
        self.log = log
        read_end, write_end = os.pipe()  # not inherited by other servers (PEP 446)
        self.writer: TextIO = os.fdopen(write_end, "w", encoding="utf-8")
        self._thread = threading.Thread(target=self._copy, args=(read_end,), daemon=True,
                                        name=f"mcp-log-{log.path.name}")  # fmt: skip
        self._thread.start()

    def close_writer(self) -> None:
        """Let go of our end of the pipe (idempotent)."""
        if not self.writer.closed:
            self.writer.close()

    def join(self, timeout: float) -> None:
        """Wait up to `timeout` seconds for everything the server wrote to reach the log."""
        self._thread.join(timeout)

    def _copy(self, read_end: int) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        try:
            while chunk := os.read(read_end, _CHUNK):
                self.log.write(decoder.decode(chunk))
            self.log.write(decoder.decode(b"", final=True))
        except OSError:
            pass
        finally:
            os.close(read_end)
            self.log.close()


class _ToServerLog(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        log = _current.get()
        if log is None:
            return  # the SDK runs only inside servers' tasks; nothing else to say it to
        try:
            line = _unparsed(record)
            if line is not None:  # the line itself says more than the SDK's traceback
                record = logging.makeLogRecord({**record.__dict__, "exc_info": None,
                                                "exc_text": None, "args": None,
                                                "msg": f"stdout, not MCP: {line}"})  # fmt: skip
            log.write(self.format(record) + "\n")
        except Exception:
            self.handleError(record)


def _unparsed(record: logging.LogRecord) -> str | None:
    """The stdout line of the SDK's "Failed to parse" record (pydantic's error holds it)."""
    error = record.exc_info[1] if record.exc_info else None
    errors = getattr(error, "errors", None)
    if record.name != "mcp.client.stdio" or not callable(errors):
        return None
    try:
        found = errors()[0].get("input")
    except Exception:  # another kind of error after all: logged as it is
        return None
    text = found if isinstance(found, str) else repr(found)
    return text if len(text) <= 2000 else f"{text[:2000]}… ({len(text):,} characters)"


_handler = _ToServerLog()
_handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))


def route_sdk_logs(log: CappedLog) -> None:
    """Send the SDK's records from this task (and the tasks it starts) to `log`, not the
    terminal. Called at the start of each server's task."""
    _current.set(log)
    for name in _SDK_LOGGERS:
        logger = logging.getLogger(name)
        if _handler not in logger.handlers:
            logger.addHandler(_handler)
            logger.propagate = False  # a root handler (or Python's last resort) would print
