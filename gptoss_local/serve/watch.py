"""Noticing a client that hung up while its request waits or runs, so its generation stops.

Writes to a closed connection fail, but a request in the queue, in prompt evaluation or
without streaming writes nothing for a long time. A small thread per running request looks at
the socket instead: readable with nothing to read means the client closed it.
"""

from __future__ import annotations

import select
import socket
import threading

POLL_SECONDS = 0.25


class DisconnectWatch:
    """While entered, sets `cancel` as soon as the client closes `connection`."""

    def __init__(self, connection: socket.socket, cancel: threading.Event) -> None:
        self._connection, self._cancel = connection, cancel
        self._done = threading.Event()
        self.closed = False  # the client hung up
        self._thread = threading.Thread(target=self._watch, name="serve-watch", daemon=True)

    def __enter__(self) -> DisconnectWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()

    def _watch(self) -> None:
        while not self._done.is_set():
            try:
                readable, _, _ = select.select([self._connection], [], [], POLL_SECONDS)
                if not readable:
                    continue
                data = self._connection.recv(1, socket.MSG_PEEK)
            except (BlockingIOError, InterruptedError):
                continue
            except (OSError, ValueError):  # reset, or the socket is closed already
                data = b""
            if not data:
                self.closed = True
                self._cancel.set()
            return  # closed, or the client sent its next request: either way, done looking
