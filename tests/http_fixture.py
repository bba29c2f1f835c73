"""A real HTTP server on 127.0.0.1 with Range support and injectable faults, for the model store
tests. Loopback only: nothing here reaches another host."""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from store_files import REPO


@dataclass
class Fault:
    """What the server does wrong on the next `times` requests for one path.

    kinds: drop (close after `at` of the file), ignore_range (200 with the whole file), flip
    (right length, wrong bytes), empty (Content-Length 0), html (a web page), status (answer
    `status`), stall (stop `seconds` after `at` of the file), throttle (send `rate` bytes/s),
    redirect (302 to `location`).
    """

    kind: str
    at: float = 0.0
    status: int = 0
    seconds: float = 0.0
    rate: int = 0
    times: int = 1
    location: str = ""  # for kind "redirect": where a 302 sends the client


@dataclass
class Hit:
    """One request as the server saw it."""

    path: str
    start: int
    status: int
    sent: int = 0  # body bytes written for this request


@dataclass
class FileServer:
    """Serves `files` (name -> bytes or a Path) under any prefix: /<prefix>/<repo>/<name>."""

    files: dict[str, bytes | Path] = field(default_factory=dict)
    faults: dict[str, list[Fault]] = field(default_factory=dict)
    hits: list[Hit] = field(default_factory=list)
    sent: Counter = field(default_factory=Counter)  # body bytes sent, per file name
    port: int = 0

    def fault(self, prefix: str, name: str, fault: Fault) -> None:
        """Queue `fault` for requests of `name` under `prefix`."""
        self.faults.setdefault(f"/{prefix}/{REPO}/{name}", []).append(fault)

    def url(self, prefix: str) -> str:
        """A manifest URL template for this server under `prefix`."""
        return f"http://127.0.0.1:{self.port}/{prefix}/{{repo}}/{{file}}"

    def next_fault(self, path: str) -> Fault | None:
        queue = self.faults.get(path)
        if not queue:
            return None
        fault = queue[0]
        if fault.times > 0:
            fault.times -= 1
            if fault.times == 0:
                queue.pop(0)
        return fault


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        owner = self.server.owner
        name = self.path.rsplit("/", 1)[-1]
        data = owner.files.get(name)
        fault = owner.next_fault(self.path)
        start = _range_start(self.headers.get("Range"))
        if fault and fault.kind == "redirect":
            owner.hits.append(Hit(self.path, start, 302))
            self.send_response(302)
            self.send_header("Location", fault.location)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if data is None or (fault and fault.kind == "status"):
            code = fault.status if fault and fault.kind == "status" else 404
            owner.hits.append(Hit(self.path, start, code))
            self.send_error(code)
            return
        size = data.stat().st_size if isinstance(data, Path) else len(data)
        if fault and fault.kind in ("empty", "html"):
            owner.hits.append(Hit(self.path, start, 200))
            self._small_body(fault.kind)
            return
        if fault and fault.kind == "ignore_range":
            start = 0
        partial = start > 0
        hit = Hit(self.path, start, 206 if partial else 200)
        owner.hits.append(hit)
        self.send_response(206 if partial else 200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(size - start))
        if partial:
            self.send_header("Content-Range", f"bytes {start}-{size - 1}/{size}")
        self.end_headers()
        with contextlib.suppress(OSError):  # the client went away (a timeout test)
            self._body(data, hit, name, start, size, fault)

    def _small_body(self, kind: str) -> None:
        body = b"" if kind == "empty" else b"<!DOCTYPE html><html><body>Sign in</body></html>"
        self.send_response(200)
        self.send_header(
            "Content-Type", "application/octet-stream" if kind == "empty" else "text/html"
        )
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _body(
        self, data: bytes | Path, hit: Hit, name: str, start: int, size: int, fault: Fault | None
    ) -> None:
        owner = self.server.owner
        if isinstance(data, Path) and fault is None:  # the benchmark: as fast as the kernel goes
            with data.open("rb") as f:
                hit.sent = self.connection.sendfile(f, start, size - start)
                owner.sent[name] += hit.sent
            return
        body = data.read_bytes() if isinstance(data, Path) else data
        if fault and fault.kind == "flip":
            body = (
                body[: size // 2]
                + bytes(b ^ 0xFF for b in body[size // 2 : size // 2 + 16])
                + body[size // 2 + 16 :]
            )
        stop = int(size * fault.at) if fault and fault.kind in ("drop", "stall") else size
        pos = start
        while pos < size:
            if fault and fault.kind == "stall" and pos >= stop:
                time.sleep(fault.seconds)
                fault = None
            end = min(size, pos + 64 * 1024, stop if pos < stop else size)
            self.wfile.write(body[pos:end])
            owner.sent[name] += end - pos
            hit.sent += end - pos
            pos = end
            if fault and fault.kind == "throttle":
                time.sleep((64 * 1024) / fault.rate)
            if fault and fault.kind == "drop" and pos >= stop:
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)
                self.close_connection = True
                return


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: FileServer


def _range_start(header: str | None) -> int:
    if not header or not header.startswith("bytes="):
        return 0
    return int(header[len("bytes=") :].split("-", 1)[0] or 0)


def start_server(owner: FileServer, tls: ssl.SSLContext | None = None) -> _Server:
    """Serve `owner`'s files on 127.0.0.1 (a free port) from a thread; stop with `stop_server`.

    With `tls` it speaks https, and `owner.port` is left alone (it may have a plain server)."""
    server = _Server(("127.0.0.1", 0), _Handler)
    server.owner = owner
    if tls:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    else:
        owner.port = server.server_address[1]
    threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
    return server


def stop_server(server: _Server) -> None:
    """Stop serving and close the socket."""
    server.shutdown()
    server.server_close()
