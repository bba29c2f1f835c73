"""Finishing a request costs no poll interval: the disconnect watch is woken when its request
ends (it used to wait out `POLL_SECONDS`), a 400 never starts one, and an answer is not held
back by Nagle's algorithm waiting for the client's delayed ACK (about 40 ms on Linux).

Times are compared with the watch's poll interval, as medians of a few runs, not with
absolute speeds."""

from __future__ import annotations

import http.client
import json
import socket
import statistics
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from format_helpers import format_server
from serve_helpers import Running

from gptoss_local.serve.watch import POLL_SECONDS, DisconnectWatch

RUNS = 7


@pytest.fixture(scope="module")
def served(tiny_gguf: Path) -> Iterator[Running]:
    with format_server(tiny_gguf) as running:
        yield running


def test_a_watch_ends_as_soon_as_its_request_does() -> None:
    mine, theirs = socket.socketpair()
    took = []
    for _ in range(RUNS):
        cancel = threading.Event()
        watch = DisconnectWatch(mine, cancel).__enter__()
        time.sleep(POLL_SECONDS / 5)  # the request runs: the watch waits in its selector
        ending = time.monotonic()
        watch.__exit__(None, None, None)
        took.append(time.monotonic() - ending)
        assert not cancel.is_set()
    mine.close()
    theirs.close()
    assert statistics.median(took) < POLL_SECONDS / 10


def post(connection: http.client.HTTPConnection, body: dict) -> tuple[int, float]:
    """POST a chat completion on a kept-alive connection: the status and the seconds it took."""
    data = json.dumps(body).encode()
    started = time.monotonic()
    connection.request("POST", "/v1/chat/completions", data,
                       {"Content-Type": "application/json"})  # fmt: skip
    reply = connection.getresponse()
    reply.read()
    return reply.status, time.monotonic() - started


def test_a_400_comes_back_at_once(served: Running) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=30)
    refused = {"model": "tiny", "messages": [{"role": "user", "content": "hi"}], "n": 3}
    took = []
    for _ in range(RUNS):
        status, seconds = post(connection, refused)
        assert status == 400
        took.append(seconds)
    connection.close()
    # A poll would cost a whole interval, and Nagle about a sixth of one.
    assert statistics.median(took) < POLL_SECONDS / 10


def test_a_whole_reply_comes_back_as_soon_as_it_ends(served: Running) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=30)
    short = {"model": "tiny", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 2}
    gaps = []
    for _ in range(RUNS):
        status, _ = post(connection, short)
        assert status == 200
        gaps.append(time.monotonic() - served.steering.ended_at[-1])
    connection.close()
    assert statistics.median(gaps) < POLL_SECONDS / 10
