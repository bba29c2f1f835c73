"""One connection of the server: each request checked (Host, key), routed, answered and
logged in one line; a client that hangs up ends its request quietly."""

from __future__ import annotations

import json
import logging
import threading
import time
from contextlib import AbstractContextManager
from http.server import BaseHTTPRequestHandler
from typing import Any, Protocol
from urllib.parse import urlsplit

from gptoss_local.serve.apis import error_body
from gptoss_local.serve.errors import ApiError
from gptoss_local.serve.guard import Guard
from gptoss_local.serve.request_body import body_length, parse_json
from gptoss_local.serve.service import GONE, Answer, Service
from gptoss_local.serve.sse import ChunkedWriter
from gptoss_local.serve.watch import DisconnectWatch
from gptoss_local.urls import PREFILL_PATH, SWITCH_PATH

IDLE_SECONDS = 120  # a kept-alive connection with no new request is closed after this
REFUSED_SECONDS = 5  # how long a connection over the limit may take to send its request
log = logging.getLogger("gptoss_local.serve")


class Host(Protocol):
    """What a connection needs of the server it came to (`server.ApiServer`)."""

    service: Service
    guard: Guard
    stopping: bool

    def admit(self) -> bool: ...
    def release(self) -> None: ...
    def request(self) -> AbstractContextManager[None]: ...
    def track(self, cancel: threading.Event, running: bool) -> None: ...


class Handler(BaseHTTPRequestHandler):
    """One connection; each request is checked (Host, key), routed and logged."""

    protocol_version = "HTTP/1.1"
    server_version = "gptoss-local"
    timeout = IDLE_SECONDS
    # TCP_NODELAY: a JSON answer is written as its headers, then its body, and a stream as
    # many small chunks; with Nagle's algorithm the second write waits for the client's
    # delayed ACK, which added about 40 ms to every answer on Linux.
    disable_nagle_algorithm = True
    server: Host  # type: ignore[assignment]  # BaseHTTPRequestHandler names a socketserver

    def setup(self) -> None:
        super().setup()
        self.admitted = self.server.admit()
        if not self.admitted:  # answered 503 once it has sent its request: no long waits
            self.connection.settimeout(REFUSED_SECONDS)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            if self.admitted:
                self.server.release()

    def do_GET(self) -> None:
        with self.server.request():
            self._handle("GET")

    def do_HEAD(self) -> None:  # the ollama CLI's check that a server is up: `HEAD /`
        with self.server.request():
            self._handle("HEAD")

    def do_POST(self) -> None:
        with self.server.request():
            self._handle("POST")

    def do_DELETE(self) -> None:
        with self.server.request():
            self._handle("DELETE")

    def do_OPTIONS(self) -> None:
        with self.server.request():
            self._handle("OPTIONS")

    def log_message(self, format: str, *args: Any) -> None:
        """http.server's own lines are replaced by one line per request (`_log`)."""

    def _handle(self, method: str) -> None:
        started, answer = time.monotonic(), Answer(status=500)
        path = urlsplit(self.path).path
        try:
            answer = self._answer(method, path)
        except ApiError as exc:
            answer = Answer(status=exc.status, body=error_body(path, exc))
            self._send(answer, retry=exc.status == 503)
        except OSError:  # the client hung up (or reset, or stalled past the timeout)
            answer, self.close_connection = Answer(status=GONE), True
        except Exception:
            log.exception("%s %s failed", method, path)
            internal = ApiError(500, "internal error", "internal")
            answer = Answer(status=500, body=error_body(path, internal))
            self._send(answer)
        finally:
            self._log(method, path, answer, time.monotonic() - started)

    def _answer(self, method: str, path: str) -> Answer:
        if not self.admitted or self.server.stopping:
            self._refuse()
        guard = self.server.guard
        if not guard.host_ok(self.headers.get("Host")):
            raise ApiError(403, f"Host {self.headers.get('Host')!r} is not this server's "
                           "address (start it with --allowed-host NAME to accept that name)",
                           "invalid_host")  # fmt: skip
        if method == "OPTIONS":
            return self._preflight()
        if path not in ("/health", "/") and not guard.key_ok(
            self.headers.get("Authorization"), self.headers.get("x-api-key")
        ):
            raise ApiError(401, "Incorrect or missing API key: send `Authorization: Bearer "
                           "KEY` (or `x-api-key: KEY`) with the server's --api-key.",
                           "invalid_api_key")  # fmt: skip
        service = self.server.service
        if method in ("GET", "HEAD"):
            answer = service.get(path)
        else:
            data = self._body()
            if method == "POST" and path == PREFILL_PATH:
                answer = self._prefill(service, data)
            elif method == "POST" and path == SWITCH_PATH:
                answer = service.switch(data)
            else:
                answer = service.plain(method, path, data) or self._generate(service, path, data)
        self._send(answer)
        return answer

    def _refuse(self) -> None:
        """A 503 for a connection over the limit, or for a request once `stop()` began."""
        self.close_connection = True
        if self.command in ("POST", "DELETE"):  # read, so that closing does not reset the reply
            self.rfile.read(body_length(self.headers))
        why = "is shutting down" if self.server.stopping else "has too many connections open"
        raise ApiError(503, f"The server {why}. Try again shortly.", "server_busy")

    def _generate(self, service: Service, path: str, data: Any) -> Answer:
        asked = service.ask(path, data)  # a 400 goes back at once: nothing to watch yet
        cancel = threading.Event()
        self.server.track(cancel, True)
        try:
            with DisconnectWatch(self.connection, cancel) as watch:
                answer = service.answer(asked, cancel, self._client_name())
                if self.server.stopping and cancel.is_set() and answer.stream is None:
                    # cut short by `stop()`: not a reply to pass off as whole
                    raise ApiError(503, "The server is shutting down.", "server_busy")
                if answer.stream is not None:
                    self._send_stream(answer, cancel)
                    answer.stream = None  # sent
                elif watch.closed:
                    answer.status = GONE  # nobody to send it to
            return answer
        finally:
            self.server.track(cancel, False)

    def _prefill(self, service: Service, data: Any) -> Answer:
        """Our prefill: evaluated while the client stays (a reply's request supersedes it)."""
        cancel = threading.Event()
        with DisconnectWatch(self.connection, cancel):
            return service.prefill(data, cancel, self._client_name())

    def _client_name(self) -> str:
        """Who asks, as `ps` shows it: the X-Client-Name header, else the User-Agent."""
        name = self.headers.get("X-Client-Name") or self.headers.get("User-Agent") or ""
        return name.strip()[:80]

    def _body(self) -> Any:
        try:
            length = body_length(self.headers)
        except ApiError:
            self.close_connection = True  # the body, if any, was not read
            raise
        raw = self.rfile.read(length)
        if len(raw) < length:
            raise ConnectionResetError("the client hung up while sending its body")
        return parse_json(raw, self.headers.get("Content-Type"))

    def _preflight(self) -> Answer:
        origin = self.server.guard.cors_origin(self.headers.get("Origin"))
        answer = Answer(status=204 if origin else 405)
        self.send_response(answer.status)
        if origin:
            self.send_header("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
            self.send_header(
                "Access-Control-Allow-Headers",
                "Authorization, Content-Type, x-api-key, anthropic-version",
            )
            self.send_header("Access-Control-Max-Age", "600")
        self._common_headers()
        self.send_header("Content-Length", "0")
        self.end_headers()
        return answer

    def _send(self, answer: Answer, retry: bool = False) -> None:
        """Write a JSON answer; a client that hung up makes it GONE (one log line, no
        traceback)."""
        if answer.status == GONE:
            self.close_connection = True
            return
        if answer.text is not None:  # Ollama's `GET /`
            data, kind = answer.text.encode(), "text/plain; charset=utf-8"
        elif answer.body is not None:
            data, kind = json.dumps(answer.body, ensure_ascii=False).encode(), "application/json"
        else:
            return
        try:
            self.send_response(answer.status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            if retry:
                self.send_header("Retry-After", "1")
            if self.close_connection:
                self.send_header("Connection", "close")
            self._common_headers()
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
        except OSError:
            answer.status, self.close_connection = GONE, True

    def _send_stream(self, answer: Answer, cancel: threading.Event) -> None:
        """Write the events as they come; a client that hung up cancels the generation, whose
        remaining events are then read and dropped so that it ends and frees the model."""
        assert answer.stream is not None
        self.send_response(200)
        self.send_header("Content-Type", answer.content_type)
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
        stats = answer.generation.stats if answer.generation is not None else None
        tokens = ""
        if stats is not None:
            tokens = (f" prompt={stats.prompt_tokens} cached={stats.cached_tokens} "
                      f"completion={stats.generated_tokens}")  # fmt: skip
        log.info("%s %s %s %d %.3fs%s", self.client_address[0], method, path, answer.status,
                 seconds, tokens)  # fmt: skip
