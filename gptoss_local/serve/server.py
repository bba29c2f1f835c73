"""The HTTP layer: the standard library's `ThreadingHTTPServer`, one thread per connection.

Why the standard library: a reply is a blocking loop on a native engine, which a thread runs
naturally; the API is three JSON routes and server-sent events; and a framework (an ASGI
server and its stack) would be the package's heaviest dependency for no gain in what the
server can do. HTTP/1.1 keep-alive works (every body has a length, streams are chunked).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from gptoss_local.serve.errors import ApiError
from gptoss_local.serve.guard import Guard
from gptoss_local.serve.service import GONE, Answer, Service
from gptoss_local.serve.sse import ChunkedWriter
from gptoss_local.serve.watch import DisconnectWatch

MAX_BODY = 16 * 1024 * 1024  # far above any context's worth of text
IDLE_SECONDS = 120  # a kept-alive connection with no new request is closed after this
log = logging.getLogger("gptoss_local.serve")


class ApiServer(ThreadingHTTPServer):
    """The listening server; `stop()` cancels the generations running and closes it."""

    daemon_threads = True

    def __init__(self, service: Service, guard: Guard) -> None:
        self.service, self.guard = service, guard
        self.address_family = socket.AF_INET6 if ":" in guard.host else socket.AF_INET
        self._active: set[threading.Event] = set()
        self._lock = threading.Lock()
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
        with self._lock:
            (self._active.add if running else self._active.discard)(cancel)

    def stop(self) -> None:
        """Cancel what runs, stop accepting, close the socket."""
        with self._lock:
            for cancel in self._active:
                cancel.set()
        self.shutdown()
        self.server_close()


class Handler(BaseHTTPRequestHandler):
    """One connection; each request is checked (Host, key), routed and logged."""

    protocol_version = "HTTP/1.1"
    server_version = "gptoss-local"
    timeout = IDLE_SECONDS
    server: ApiServer

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_OPTIONS(self) -> None:
        self._handle("OPTIONS")

    def log_message(self, format: str, *args: Any) -> None:
        """http.server's own lines are replaced by one line per request (`_log`)."""

    def _handle(self, method: str) -> None:
        started, answer = time.monotonic(), Answer(status=500)
        path = urlsplit(self.path).path
        try:
            answer = self._answer(method, path)
        except ApiError as exc:
            answer = Answer(status=exc.status, body=exc.body())
            self._send(answer, retry=exc.status == 503)
        except (BrokenPipeError, ConnectionResetError):
            answer, self.close_connection = Answer(status=GONE), True
        except Exception:
            log.exception("%s %s failed", method, path)
            answer = Answer(status=500, body=ApiError(500, "internal error", "internal").body())
            self._send(answer)
        finally:
            self._log(method, path, answer, time.monotonic() - started)

    def _answer(self, method: str, path: str) -> Answer:
        guard = self.server.guard
        if not guard.host_ok(self.headers.get("Host")):
            raise ApiError(403, f"Host {self.headers.get('Host')!r} is not this server's "
                           "address (start it with --allowed-host NAME to accept that name)",
                           "invalid_host")  # fmt: skip
        if method == "OPTIONS":
            return self._preflight()
        if path != "/health" and not guard.key_ok(self.headers.get("Authorization")):
            raise ApiError(401, "Incorrect or missing API key: send `Authorization: Bearer "
                           "KEY` with the server's --api-key.", "invalid_api_key")  # fmt: skip
        service = self.server.service
        if method == "GET":
            answer = service.get(path)
        else:
            answer = self._generate(service, path, self._body())
        self._send(answer)
        return answer

    def _generate(self, service: Service, path: str, data: Any) -> Answer:
        cancel = threading.Event()
        self.server.track(cancel, True)
        try:
            with DisconnectWatch(self.connection, cancel) as watch:
                answer = service.post(path, data, cancel)
                if answer.stream is not None:
                    self._send_stream(answer, cancel)
                    answer.stream = None  # sent
                elif watch.closed:
                    answer.status = GONE  # nobody to send it to
            return answer
        finally:
            self.server.track(cancel, False)

    def _body(self) -> Any:
        if self.headers.get("Transfer-Encoding") or self.headers.get("Content-Length") is None:
            self.close_connection = True
            raise ApiError(411, "send the body with a Content-Length", "length_required")
        try:
            length = int(self.headers["Content-Length"])
        except ValueError:
            self.close_connection = True
            raise ApiError(400, "Content-Length is not a number", "invalid_request") from None
        if length > MAX_BODY:
            self.close_connection = True
            raise ApiError(413, f"the body is over {MAX_BODY // 2**20} MiB", "body_too_large")
        raw = self.rfile.read(length)
        kind = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if kind != "application/json":
            raise ApiError(415, "send the body as application/json", "unsupported_media_type")
        try:
            return json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise ApiError(400, f"the body is not valid JSON: {exc}", "invalid_json") from None

    def _preflight(self) -> Answer:
        origin = self.server.guard.cors_origin(self.headers.get("Origin"))
        answer = Answer(status=204 if origin else 405)
        self.send_response(answer.status)
        if origin:
            self.send_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
            self.send_header("Access-Control-Allow-Headers", "Authorization, Content-Type")
            self.send_header("Access-Control-Max-Age", "600")
        self._common_headers()
        self.send_header("Content-Length", "0")
        self.end_headers()
        return answer

    def _send(self, answer: Answer, retry: bool = False) -> None:
        if answer.status == GONE:
            self.close_connection = True
            return
        if answer.body is None:
            return
        data = json.dumps(answer.body, ensure_ascii=False).encode()
        self.send_response(answer.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if retry:
            self.send_header("Retry-After", "1")
        self._common_headers()
        self.end_headers()
        self.wfile.write(data)

    def _send_stream(self, answer: Answer, cancel: threading.Event) -> None:
        """Write the events as they come; a client that hung up cancels the generation, whose
        remaining events are then read and dropped so that it ends and frees the model."""
        assert answer.stream is not None
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self._common_headers()
        self.end_headers()
        writer, gone = ChunkedWriter(self.wfile), False
        try:
            for piece in answer.stream:
                if gone:
                    continue
                try:
                    writer.write(piece)
                except OSError:
                    gone, self.close_connection = True, True
                    cancel.set()
        except BaseException:  # never leave the reply holding the model
            cancel.set()
            for _ in answer.stream:
                pass
            raise
        if gone:
            answer.status = GONE
            return
        try:
            writer.end()
        except OSError:
            answer.status, self.close_connection = GONE, True

    def _common_headers(self) -> None:
        origin = self.server.guard.cors_origin(self.headers.get("Origin"))
        if origin:
            self.send_header("Access-Control-Allow-Origin", origin)
            self.send_header("Vary", "Origin")

    def _log(self, method: str, path: str, answer: Answer, seconds: float) -> None:
        """Method, path, status, time and token counts; never what was asked or answered."""
        stats = answer.turn.stats if answer.turn is not None else None
        tokens = ""
        if stats is not None:
            tokens = (f" prompt={stats.prompt_tokens} cached={stats.cached_tokens} "
                      f"completion={stats.generated_tokens}")  # fmt: skip
        log.info("%s %s %s %d %.3fs%s", self.client_address[0], method, path, answer.status,
                 seconds, tokens)  # fmt: skip


def make_server(service: Service, guard: Guard) -> ApiServer:
    """A server for `service` listening as `guard` says (port 0: a free one, see `.url`)."""
    return ApiServer(service, guard)
