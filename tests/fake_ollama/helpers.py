"""Put the stand-in `ollama` on PATH, run it by hand, and other listeners for the daemon tests."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from http_helpers import http_stand_in

from gptoss_local.backends.ollama.probe import free_port, probe

SCRIPT = Path(__file__).with_name("fake_ollama.py")
TESTS = SCRIPT.parent.parent


def install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gguf: Path | None = None) -> Path:
    """Make `ollama` (the stand-in) the only one on PATH; OLLAMA_HOST points at a closed port.

    Returns:
        The stand-in program.
    """
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    program = bin_dir / "ollama"
    # The shebang names this interpreter, which has llama_cpp and the project installed.
    program.write_text(
        f"#!{sys.executable}\n" + SCRIPT.read_text(encoding="utf-8").split("\n", 1)[1]
    )
    program.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(TESTS.parent), str(TESTS)]))
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{free_port()}")
    monkeypatch.setenv("FAKE_OLLAMA_MODELS", "gpt-oss:20b")
    if gguf is not None:
        monkeypatch.setenv("FAKE_OLLAMA_GGUF", str(gguf))
    for name in ("FAKE_OLLAMA_EXIT_AT_START", "FAKE_OLLAMA_NEVER_HEALTHY", "FAKE_OLLAMA_DIE_ONCE",
                 "FAKE_OLLAMA_PULL_FAIL", "FAKE_OLLAMA_VERSION", "FAKE_OLLAMA_VRAM"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    return program


@contextmanager
def running_fake(program: Path, port: int, **env: str) -> Iterator[subprocess.Popen[bytes]]:
    """The stand-in serving on `port`, started by the test (a server someone else runs)."""
    full = {**os.environ, "OLLAMA_HOST": f"127.0.0.1:{port}", **env}
    proc = subprocess.Popen([str(program), "serve"], env=full, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 15
        while probe("127.0.0.1", port).kind == "closed":
            assert proc.poll() is None and time.monotonic() < deadline, "stand-in did not start"
            time.sleep(0.05)
        yield proc
    finally:
        proc.kill()
        proc.wait()


class _NotOllama(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"<html>a web app</html>"
        self.send_response(200)
        self.send_header("Server", "nginx")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def foreign_http() -> AbstractContextManager[int]:
    """An HTTP server that is not Ollama (HTML for every GET); yields its port."""
    return http_stand_in(_NotOllama)


@contextmanager
def not_http() -> Iterator[int]:
    """A listener that greets like SSH and hangs up; yields its port."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    stop = threading.Event()

    def serve() -> None:
        sock.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
            except OSError:
                continue
            with conn:
                conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield int(sock.getsockname()[1])
    finally:
        stop.set()
        thread.join()
        sock.close()


def gone(pid: int, within: float = 5.0) -> bool:
    """Whether process `pid` is gone (or a zombie) within `within` seconds."""
    import psutil

    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.05)
    return False
