"""`serve --ollama` on loopback ports the tests pick (never Ollama's real 11434): a free port is
taken and answers Ollama's API; a port a fake Ollama holds (an honest fake here: what is tested
is how serve tells it apart, by what it answers) is named with its version and left alone, as
are another gptoss-local and an unknown program; the command says which."""

from __future__ import annotations

import http.client
import json
import socket
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from http_helpers import http_stand_in
from read_helpers import NAMES, PlainEngine
from serve_helpers import serve_process

from gptoss_local.backends.base import GenerationSettings
from gptoss_local.backends.ollama.probe import free_port
from gptoss_local.commands.serve_ollama import ollama_listener
from gptoss_local.serve.guard import Guard
from gptoss_local.serve.service import Service


class FakeOllama(BaseHTTPRequestHandler):
    """Answers as Ollama 0.12.3 does at its liveness and version routes."""

    def do_GET(self) -> None:
        body = b"Ollama is running" if self.path == "/" else b'{"version":"0.12.3"}'
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def fake_ollama() -> AbstractContextManager[int]:
    return http_stand_in(FakeOllama)


@contextmanager
def silent_program() -> Iterator[int]:
    """A program that holds a port and answers nothing HTTP (it closes each connection)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        stop = threading.Event()

        def refuse() -> None:
            while not stop.is_set():
                try:
                    connection, _ = sock.accept()
                except OSError:
                    return
                connection.close()

        threading.Thread(target=refuse, daemon=True).start()
        yield int(sock.getsockname()[1])
        stop.set()


def service() -> Service:
    return Service(PlainEngine(), NAMES, GenerationSettings())  # type: ignore[arg-type]


def get(port: int, path: str) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", path)
        answer = connection.getresponse()
        return answer.status, answer.read()
    finally:
        connection.close()


def test_a_free_port_answers_ollamas_api(capsys: pytest.CaptureFixture[str]) -> None:
    port = free_port()
    server = ollama_listener(service(), Guard("127.0.0.1", 0), port)
    assert server is not None
    try:
        assert get(port, "/") == (200, b"Ollama is running")
        status, raw = get(port, "/api/tags")
        assert status == 200 and json.loads(raw)["models"][1]["name"] == "gpt-oss:20b"
        assert f"http://127.0.0.1:{port}" in capsys.readouterr().err
    finally:
        server.stop()


def test_a_running_ollama_is_named_and_left_alone(capsys: pytest.CaptureFixture[str]) -> None:
    with fake_ollama() as port:
        assert ollama_listener(service(), Guard("127.0.0.1", 0), port) is None
        assert get(port, "/api/version") == (200, b'{"version":"0.12.3"}')  # still the fake
    said = capsys.readouterr().err
    assert f"Ollama 0.12.3 is already on port {port}" in said and "talk to it" in said


def test_another_gptoss_local_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    port = free_port()
    first = ollama_listener(service(), Guard("127.0.0.1", 0), port)
    assert first is not None
    try:
        assert ollama_listener(service(), Guard("127.0.0.1", 0), port) is None
    finally:
        first.stop()
    assert "another gptoss-local serve" in capsys.readouterr().err


def test_an_unknown_program_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    with silent_program() as port:
        assert ollama_listener(service(), Guard("127.0.0.1", 0), port) is None
    assert f"unknown program (not Ollama) holds port {port}" in capsys.readouterr().err


def test_the_command_listens_on_the_ollama_port(tiny_gguf: Path, tmp_path: Path) -> None:
    port = free_port()
    with serve_process(tiny_gguf, tmp_path, "--ollama", "--ollama-port", str(port)) as served:
        assert get(port, "/") == (200, b"Ollama is running")
        status, raw = get(served.port, "/api/ps")  # its own port speaks Ollama's API too
        assert status == 200 and json.loads(raw)["models"][0]["size_vram"] == 0  # on the CPU
        assert f"http://127.0.0.1:{port}" in served.log()
