"""The HTTP layer: the standard library's `ThreadingHTTPServer`, one thread per connection.

Why the standard library: a reply is a blocking loop on a native engine, which a thread runs
naturally; the API is three JSON routes and server-sent events; and a framework (an ASGI
server and its stack) would be the package's heaviest dependency for no gain in what the
server can do. HTTP/1.1 keep-alive works (every body has a length, streams are chunked);
`handler.py` answers each connection.

Hostile clients are bounded: bodies by `request_body`, the work a request causes by
`limits`, connections by `capacity.connection_limit` (a request on one more is answered 503
at once, and the listen backlog holds a burst of them rather than resetting it), and a client
that hangs up costs one log line. `stop()` cancels what runs and waits for it only briefly.
"""

from __future__ import annotations

import dataclasses
import logging
import socket
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import ThreadingHTTPServer
from typing import Any

from gptoss_local.serve.capacity import connection_limit, listen_backlog
from gptoss_local.serve.guard import Guard
from gptoss_local.serve.handler import Handler
from gptoss_local.serve.service import Service

STOP_WAIT_SECONDS = 3.0  # cancelled replies stop within a token or a tokenizer chunk
log = logging.getLogger("gptoss_local.serve")


class ApiServer(ThreadingHTTPServer):
    """The listening server; `stop()` cancels the generations running and closes it."""

    daemon_threads = True
    block_on_close = False  # an idle kept-alive connection must not hold up `stop()`

    def __init__(self, service: Service, guard: Guard) -> None:
        self.service, self.guard = service, guard
        self.address_family = socket.AF_INET6 if ":" in guard.host else socket.AF_INET
        scheduler = service.scheduler
        self.request_queue_size = listen_backlog(scheduler.max_waiting, scheduler.running)
        self.max_connections = connection_limit(scheduler.max_waiting, scheduler.running)
        self.stopping = False
        self._active: set[threading.Event] = set()
        self._connections = self._requests = 0
        self._changed = threading.Condition()
        super().__init__((guard.host, guard.port), Handler)
        # Port 0 asks for a free port; the Host check needs the one actually bound.
        self.guard = dataclasses.replace(guard, port=self.server_address[1])

    @property
    def url(self) -> str:
        """The base URL clients use (with /v1)."""
        host, port = str(self.server_address[0]), self.server_address[1]
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}/v1"

    def track(self, cancel: threading.Event, running: bool) -> None:
        """Remember (or forget) a generation's cancel event, so `stop()` can set it."""
        with self._changed:
            if running:
                self._active.add(cancel)
                if self.stopping:
                    cancel.set()
            else:
                self._active.discard(cancel)
            self._changed.notify_all()

    @contextmanager
    def request(self) -> Iterator[None]:
        """Count a request as in progress, from its headers to its log line."""
        with self._changed:
            self._requests += 1
        try:
            yield
        finally:
            with self._changed:
                self._requests -= 1
                self._changed.notify_all()

    def admit(self) -> bool:
        """Count a new connection in, unless `max_connections` are open (then: False)."""
        with self._changed:
            if self._connections >= self.max_connections:
                return False
            self._connections += 1
            return True

    def release(self) -> None:
        """Count an admitted connection out."""
        with self._changed:
            self._connections -= 1

    def stop(self, wait: float = STOP_WAIT_SECONDS) -> None:
        """Cancel what runs, stop accepting, close the socket; wait up to `wait` seconds for
        the requests in progress to be answered and logged (a reply stuck in native code is
        left to the exit; idle kept-alive connections are not waited for)."""
        with self._changed:
            self.stopping = True
            for cancel in self._active:
                cancel.set()
        self.shutdown()
        self.server_close()
        with self._changed:
            self._changed.wait_for(lambda: not self._requests, wait)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A connection that failed outside a request's own handling (a reset while its
        request line was read, say): one line, and a traceback only for a bug."""
        exc = sys.exc_info()[1]
        if isinstance(exc, OSError):
            log.info("%s connection failed: %s", client_address[0], type(exc).__name__)
        else:
            log.exception("%s connection failed", client_address[0])


def make_server(service: Service, guard: Guard) -> ApiServer:
    """A server for `service` listening as `guard` says (port 0: a free one, see `.url`)."""
    return ApiServer(service, guard)
