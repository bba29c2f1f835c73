"""Noticing a client that hung up while its request waits or runs, so its generation stops.

Writes to a closed connection fail, but a request in the queue, in prompt evaluation or
without streaming writes nothing for a long time. A small thread per running request looks at
the socket instead: readable with nothing to read means the client closed it. A socket pair
wakes it when the request ends, so that ending it costs no poll interval (it cost every
request up to a quarter of a second).
"""

from __future__ import annotations

import selectors
import socket
import threading

POLL_SECONDS = 0.25


class DisconnectWatch:
    """While entered, sets `cancel` as soon as the client closes `connection`."""

    def __init__(self, connection: socket.socket, cancel: threading.Event) -> None:
        self._connection, self._cancel = connection, cancel
        self._done = threading.Event()
        self._wake, self._waker = socket.socketpair()
        self.closed = False  # the client hung up
        self._thread = threading.Thread(target=self._watch, name="serve-watch", daemon=True)

    def __enter__(self) -> DisconnectWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._waker.send(b"x")
        self._thread.join()
        self._wake.close()
        self._waker.close()

    def _watch(self) -> None:
        # A selector, not select.select: that refuses descriptors over 1,023, which a server
        # with many connections open hands out.
        with selectors.DefaultSelector() as selector:
            try:
                selector.register(self._connection, selectors.EVENT_READ)
                selector.register(self._wake, selectors.EVENT_READ)
            except (OSError, ValueError):  # the connection is closed already
                return self._hung_up()
            while not self._done.is_set():
                try:
                    ready = {key.fileobj for key, _ in selector.select(POLL_SECONDS)}
                    if self._connection not in ready:
                        continue  # the time to look again, or woken to end
                    data = self._connection.recv(1, socket.MSG_PEEK)
                except (BlockingIOError, InterruptedError):
                    continue
                except (OSError, ValueError):  # reset, or the socket is closed already
                    data = b""
                if not data:
                    self._hung_up()
                return  # closed, or the client sent its next request: done looking
        return None

    def _hung_up(self) -> None:
        self.closed = True
        self._cancel.set()
