"""A real HTTP server on 127.0.0.1 with Range support and injectable faults, and the files and
manifest it serves, for the model store tests. Loopback only: nothing here reaches another host."""

from __future__ import annotations

import contextlib
import hashlib
import os
import random
import socket
import struct
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from gptoss_local import catalog
from gptoss_local.catalog import Shape
from gptoss_local.store.download import RetryPolicy
from gptoss_local.store.pull import PullOptions

REPO = "test-org/tiny-GGUF"
FAST = RetryPolicy(attempts=3, backoff=0.0, timeout=5.0, chunk=64 * 1024, sleep=lambda _: None)


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


@pytest.fixture(name="http_server")
def fixture_http_server() -> FileServer:
    """A FileServer running on 127.0.0.1 for the length of one test."""
    owner = FileServer()
    server = _Server(("127.0.0.1", 0), _Handler)
    server.owner = owner
    owner.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    yield owner  # type: ignore[misc]
    server.shutdown()
    server.server_close()


@pytest.fixture(name="store_env", autouse=True)
def fixture_store_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake home with no caches, no proxies and offline mode off."""
    home = tmp_path / "user-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USERPROFILE", str(home))
    for name in ("HF_HOME", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "LLAMA_CACHE",
                 "XDG_CACHE_HOME", "HF_HUB_OFFLINE", "GPTOSS_LOCAL_OFFLINE", "HF_ENDPOINT",
                 "http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy",
                 "ALL_PROXY"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    return home


# --- files -------------------------------------------------------------------------------------


def _gstr(text: str) -> bytes:
    raw = text.encode()
    return struct.pack("<Q", len(raw)) + raw


def gguf_file(payload: int, seed: int, split: tuple[int, int] | None = None) -> bytes:
    """A valid gpt-oss GGUF holding one F32 tensor of `payload` random bytes (a multiple of 4).

    `split` = (index, count) makes it shard `index` of a `count`-shard model, one tensor each.
    """
    kvs = [_gstr("general.architecture") + struct.pack("<i", 8) + _gstr("gpt-oss")]
    if split:
        no, count = split
        kvs += [
            _gstr("split.no") + struct.pack("<iH", 2, no),
            _gstr("split.count") + struct.pack("<iH", 2, count),
            _gstr("split.tensors.count") + struct.pack("<ii", 5, count),
        ]
    info = _gstr(f"t{seed}.weight") + struct.pack("<IqiQ", 1, payload // 4, 0, 0)
    head = b"GGUF" + struct.pack("<IQQ", 3, 1, len(kvs)) + b"".join(kvs) + info
    head += bytes(-len(head) % 32)
    return head + random.Random(seed).randbytes(payload)


@dataclass(frozen=True)
class Served:
    """The files of one served model, and the manifest that lists them."""

    manifest: Path
    files: dict[str, bytes]

    @property
    def names(self) -> list[str]:
        return list(self.files)


def _shape_toml() -> str:
    shape: Shape = catalog.load().model("20b").shape  # the shipped numbers: plausible and valid
    return "\n".join(f"{k} = {v}" for k, v in vars(shape).items())


def write_manifest(
    path: Path, models: dict[str, dict[str, bytes]], sources: dict[str, str]
) -> Path:
    """A manifest listing `models` (name -> files) with their real sizes and sha256."""
    lines = ["schema = 1", ""]
    for name, url in sources.items():
        lines += [f"[sources.{name}]", f'url = "{url}"', ""]
    for model, files in models.items():
        alias = model.split("-")[-1]
        lines += [
            f"[models.{model}]",
            f'aliases = ["{alias}"]',
            f'repo = "{REPO}"',
            'revision = "abc123"',
            'license = "Apache-2.0"',
            'ollama_tag = "x"',
            "",
        ]
        for fname, data in files.items():
            lines += [f"[[models.{model}.files]]", f'name = "{fname}"', f"bytes = {len(data)}",
                      f'sha256 = "{hashlib.sha256(data).hexdigest()}"', ""]  # fmt: skip
        lines += [f"[models.{model}.shape]", _shape_toml(), ""]
    path.write_text("\n".join(lines))
    return path


@pytest.fixture(name="served")
def fixture_served(
    http_server: FileServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Served:
    """Model `tiny-one` (one 3 MB file) and `tiny-split` (three shards), served from sources
    `main` and `mirror` of the test server, listed in a manifest set as GPTOSS_LOCAL_MANIFEST."""
    one = {"tiny-one.gguf": gguf_file(3 << 20, seed=1)}
    split = {f"tiny-split-{i:05d}-of-00003.gguf": gguf_file(1 << 20, 10 + i, (i - 1, 3))
             for i in (1, 2, 3)}  # fmt: skip
    http_server.files.update(one | split)
    manifest = write_manifest(
        tmp_path / "manifest.toml",
        {"tiny-one": one, "tiny-split": split},
        {"main": http_server.url("main"), "mirror": http_server.url("mirror")},
    )
    monkeypatch.setenv("GPTOSS_LOCAL_MANIFEST", str(manifest))
    return Served(manifest, one | split)


def options(**changes: object) -> PullOptions:
    """Pull options for tests: tiny backoff, no disk margin, no waiting on locks."""
    base = {"policy": FAST, "disk_margin": 0, "lock_timeout": 0.0, "lock_poll": 0.05}
    return PullOptions(**(base | changes))  # type: ignore[arg-type]


def models_dir() -> Path:
    """The isolated models folder of the current test."""
    return Path(os.environ["GPTOSS_LOCAL_HOME"]) / "models"
