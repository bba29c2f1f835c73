"""Server-sent events over HTTP/1.1 chunked transfer encoding (so the connection stays usable
for the client's next request)."""

from __future__ import annotations

import json
from typing import Any, Protocol

DONE = b"data: [DONE]\n\n"  # the end of a Chat Completions stream


def data_line(payload: Any) -> bytes:
    """One event with only a data field (Chat Completions)."""
    return b"data: " + _json(payload) + b"\n\n"


def typed_event(payload: dict[str, Any]) -> bytes:
    """One event named by the payload's `type` (the Responses API)."""
    return b"event: " + str(payload["type"]).encode() + b"\ndata: " + _json(payload) + b"\n\n"


def _json(payload: Any) -> bytes:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()


class Sink(Protocol):
    """Where the bytes go: the handler's socket file."""

    def write(self, data: bytes, /) -> object: ...

    def flush(self) -> object: ...


class ChunkedWriter:
    """Writes each piece as one HTTP chunk and flushes it, so it leaves at once."""

    def __init__(self, out: Sink) -> None:
        self._out = out

    def write(self, data: bytes) -> None:
        """Send `data` now (raises OSError when the client has gone)."""
        if data:
            self._out.write(b"%x\r\n%s\r\n" % (len(data), data))
            self._out.flush()

    def end(self) -> None:
        """The last, empty chunk."""
        self._out.write(b"0\r\n\r\n")
        self._out.flush()
