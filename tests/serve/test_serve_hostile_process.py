"""Hostile clients against `gptoss-local serve` itself: a flood of connections, clients that
hang up before their answer, a request of 200,000 messages, and SIGTERM in the middle of
it all. Each test is bounded in requests and seconds; each waits for what the server shows
(its log lines, /health, a stream's first event), never for a fixed time."""

from __future__ import annotations

import http.client
import json
import re
import signal
import socket
import struct
import sys
import threading
from pathlib import Path

import pytest
from serve_helpers import serve_process, until
from synthetic import SMALL

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and sockets")
CHAT = "/v1/chat/completions"


def http_request(port: int, body: bytes, path: str = CHAT) -> bytes:
    head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n")  # fmt: skip
    return head.encode() + body


def chat(messages: list[dict], **extra: object) -> bytes:
    return json.dumps({"model": "tiny", "messages": messages, **extra}).encode()


def exchange(port: int, data: bytes, timeout: float = 60) -> tuple[int, bytes]:
    """Send `data` on a new connection, read until the server closes: status and reply."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    return int(reply.split(b" ", 2)[1]), reply


def test_a_flood_of_connections_gets_answers_or_503s_never_resets(
    tiny_gguf: Path, tmp_path: Path
) -> None:
    count, outcomes = 200, []
    start = threading.Barrier(count)
    with serve_process(tiny_gguf, tmp_path / "home", "--max-waiting", "4") as served:
        request = http_request(served.port, chat([{"role": "user", "content": "hi"}],
                                                 max_tokens=4))  # fmt: skip

        def one() -> None:
            start.wait(30)
            try:
                outcomes.append(exchange(served.port, request)[0])
            except OSError as exc:
                outcomes.append(type(exc).__name__)

        threads = [threading.Thread(target=one) for _ in range(count)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(90)
    assert len(outcomes) == count
    assert set(outcomes) <= {200, 503}, sorted(map(str, outcomes))
    assert 503 in outcomes  # only five may run or wait


def hang_up_after(port: int, data: bytes, reset: bool) -> None:
    """Send `data` and close at once, with a reset (SO_LINGER 0) or a plain close."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    if reset:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.sendall(data)
    sock.close()


def test_clients_that_hang_up_cost_one_log_line_each(tiny_gguf: Path, tmp_path: Path) -> None:
    count = 100
    with serve_process(tiny_gguf, tmp_path / "home") as served:
        before = len(served.lines)
        logged = lambda: len(served.lines) - before  # noqa: E731
        no_length = http_request(served.port, b"[]").replace(b"Length: 2", b"Length: -1")
        bad = [
            http_request(served.port, b"{not json"),
            b"NONSENSE / HTTP/1.1\r\n\r\n",
            http_request(served.port, b'{"model": "nope"}'),
            no_length,
        ]
        for number in range(count):
            hang_up_after(served.port, bad[number % len(bad)], reset=number % 2 == 1)
        until(lambda: logged() >= count, f"a log line for each of the {count} clients", 60)
        assert exchange(served.port, http_request(served.port, b"[]"))[0] == 400  # still serving
        until(lambda: logged() > count, "the log line of the request after them")
        log = served.lines[before:]
    assert "Traceback" not in "".join(log)
    assert len(log) == count + 1 and f"POST {CHAT} 400" in log[-1], "".join(log[:40])


def test_200000_messages_are_refused_at_once_and_block_nobody(
    tiny_gguf: Path, tmp_path: Path
) -> None:
    tiny = [{"role": "user", "content": "x"}] * 200_000  # 6.8 MB
    with serve_process(tiny_gguf, tmp_path / "home") as served:
        # The socket's timeout only guards against a hang; how soon is bench/'s business.
        status, reply = exchange(served.port, http_request(served.port, chat(tiny)), timeout=20)
        assert status == 400 and b"context_length_exceeded" in reply
        hi = chat([{"role": "user", "content": "hi"}], max_tokens=2)
        assert exchange(served.port, http_request(served.port, hi), timeout=20)[0] == 200


class Streamed:
    """A streamed request read to its end on a thread; `started` is set at its first event."""

    def __init__(self, port: int, body: bytes) -> None:
        self.data, self.started = b"", threading.Event()
        self._socket = socket.create_connection(("127.0.0.1", port), timeout=120)
        self._socket.sendall(http_request(port, body))
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        with self._socket:
            while chunk := self._socket.recv(65536):
                self.data += chunk
                if b"data: " in self.data:
                    self.started.set()

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)


def waiting_now(health: http.client.HTTPConnection) -> int:
    """How many requests wait their turn, as /health says (over a kept-alive connection)."""
    health.request("GET", "/health")
    return int(json.loads(health.getresponse().read())["waiting"])


def test_sigterm_ends_serve_within_seconds_mid_request(small_gguf: Path, tmp_path: Path) -> None:
    # The reply that runs never ends by itself (its end tokens banned) and has room for 3,000
    # tokens of the mid-size model: tens of seconds on two cores, so TERM always comes mid-reply.
    ends = {str(SMALL.special_ids()[t]): -100 for t in ("<|return|>", "<|call|>", "<|endoftext|>")}
    hi = [{"role": "user", "content": "hi"}]
    with serve_process(small_gguf, tmp_path / "home", "--context", "4096") as served:
        health = http.client.HTTPConnection("127.0.0.1", served.port, timeout=30)  # kept alive
        running = Streamed(served.port, chat(hi, model="small", max_tokens=3000, stream=True,
                                             logit_bias=ends))  # fmt: skip
        assert running.started.wait(120), "the reply did not start"
        answers: list[int] = []
        queued = http_request(served.port, chat(hi, model="small", max_tokens=8))
        waiter = threading.Thread(target=lambda: answers.append(exchange(served.port, queued)[0]))
        waiter.start()
        until(lambda: waiting_now(health) == 1, "a second request to wait its turn")
        served.process.send_signal(signal.SIGTERM)
        code = served.process.wait(30)  # seconds: the running reply is cancelled, not finished
        waiter.join(10)
        running.join(10)
        health.close()
    assert code == 0
    log = served.log()
    assert "stopping" in log and "Traceback" not in log
    assert f"POST {CHAT} 503" in log and answers == [503]  # the waiting request: refused
    cut = re.search(rf"POST {CHAT} 200 .* completion=(\d+)", log)
    assert cut is not None and int(cut[1]) < 3000, log  # the running reply: cut short
