"""A stand-in HTTP server on a free loopback port, for tests that need something other than
our own server to answer there (a fake Ollama, a foreign program, a plain server)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@contextmanager
def http_stand_in(handler: type[BaseHTTPRequestHandler]) -> Iterator[int]:
    """`handler` served on 127.0.0.1 in a thread until the block ends; yields the port."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()
