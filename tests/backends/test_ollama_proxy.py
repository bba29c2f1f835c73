"""A proxy set in the environment never sees the chat with a daemon on this machine."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest
from fake_ollama.helpers import install
from installed_cli import gptoss

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the stand-in needs a shebang")

PROXY_VARIABLES = ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY")


class _Recorder(BaseHTTPRequestHandler):
    """A proxy that writes down what reaches it and forwards nothing."""

    seen: ClassVar[list[str]] = []

    def _refuse(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode("utf-8", "replace") if length > 0 else ""
        self.seen.append(f"{self.command} {self.path} {body}")
        self.send_response(502)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST = do_HEAD = do_DELETE = do_CONNECT = _refuse

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def proxy() -> Iterator[tuple[str, list[str]]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    seen: ClassVar[list[str]] = []
    _Recorder.seen = seen
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


def test_run_with_ollama_ignores_the_proxy_variables(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    tiny_gguf: Path,
    proxy: tuple[str, list[str]],
) -> None:
    # Before: httpx sent the whole chat, prompt included, to http_proxy, which answered 502.
    install(tmp_path, monkeypatch, tiny_gguf)
    address, seen = proxy
    for name in ("no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    env = dict.fromkeys(PROXY_VARIABLES, address)
    done = gptoss("run", "--backend", "ollama", "--effort", "low", "a private prompt", env=env)
    assert done.returncode == 0, done.stderr
    assert "Hello there" in done.stdout
    assert seen == []
