"""A prompt that takes seconds to tokenize (thousands of tiny messages, within every bound)
stops when its client hangs up or serve is told to stop, instead of holding the model."""

from __future__ import annotations

import json
import signal
import socket
import sys
import time
from pathlib import Path

import pytest
from serve_helpers import serve_process

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and sockets")
# Each message is a few tokens but a run of text of its own, and llama.cpp spends ~1 ms on each:
# tokenizing this prompt takes over ten seconds on one core.
MANY = [{"role": "user", "content": f"hi {n}"} for n in range(8_000)]


def _post(port: int, messages: list[dict], max_tokens: int = 4) -> socket.socket:
    body = json.dumps({"model": "roomy", "messages": messages, "max_tokens": max_tokens}).encode()
    sock = socket.create_connection(("127.0.0.1", port), timeout=60)
    head = (f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            "Content-Type: application/json\r\nConnection: close\r\n"
            f"Content-Length: {len(body)}\r\n\r\n")  # fmt: skip
    sock.sendall(head.encode() + body)
    return sock


def _status(sock: socket.socket) -> int:
    reply = b""
    while chunk := sock.recv(65536):
        reply += chunk
    sock.close()
    return int(reply.split(b" ", 2)[1])


def test_a_client_that_hangs_up_frees_the_model_while_its_prompt_is_tokenized(
    roomy_gguf: Path, tmp_path: Path
) -> None:
    with serve_process(roomy_gguf, tmp_path / "home", "--context", "32768") as served:
        heavy = _post(served.port, MANY)
        time.sleep(1.0)  # well into its tokenizing
        heavy.close()
        started = time.monotonic()
        assert _status(_post(served.port, [{"role": "user", "content": "hi"}])) == 200
        assert time.monotonic() - started < 6, served.log()


def test_sigterm_ends_serve_while_a_prompt_is_tokenized(roomy_gguf: Path, tmp_path: Path) -> None:
    with serve_process(roomy_gguf, tmp_path / "home", "--context", "32768") as served:
        heavy = _post(served.port, MANY)
        time.sleep(1.0)
        started = time.monotonic()
        served.process.send_signal(signal.SIGTERM)
        served.process.wait(30)
        assert time.monotonic() - started < 6, served.log()
        assert served.process.returncode == 0, served.log()
        heavy.close()
