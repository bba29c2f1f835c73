"""The real server over a `ResidentBackend` of the tiny model, on loopback, and a reply that
waits at a gate (so a test knows a request streams, or waits, while it looks)."""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine_helpers import open_tiny

from gptoss_local.backends.base import GenerationSettings, Reply, ReplyRequest, Stats
from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
from gptoss_local.events import Event
from gptoss_local.serve.guard import Guard
from gptoss_local.serve.resident import ResidentBackend
from gptoss_local.serve.server import ApiServer, make_server
from gptoss_local.serve.service import ENGINE_PATH, Service
from gptoss_local.serve.switch import Switcher


class Gate:
    """The server's `stream` hook: a reply whose user message starts with "gate" stops after
    its first event (or at its end, when it has only one) until `open` is set; `started` tells
    it got there."""

    def __init__(self, resident: ResidentBackend) -> None:
        self.resident = resident
        self.open, self.started = threading.Event(), threading.Event()

    def __call__(self, request: ReplyRequest, cancel: threading.Event) -> Reply:
        reply = self.resident.stream(request, cancel)
        gated = request.conversation.messages[-1].content.startswith("gate")
        return Reply(self._events(reply, gated)) if gated else reply

    def _events(self, reply: Reply, gated: bool) -> Generator[Event, None, Stats]:
        held = False
        for n, event in enumerate(reply):
            if n == 1:
                held = self._hold()
            yield event
        if not held:  # a reply of one event (random weights: text held to the end) stops too
            self._hold()
        assert reply.stats is not None
        return reply.stats

    def _hold(self) -> bool:
        self.started.set()
        self.open.wait(60)
        return True


@dataclass
class Served:
    server: ApiServer
    resident: ResidentBackend
    gate: Gate

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    def state(self) -> dict[str, Any]:
        """The engine's answer to `GET /gptoss-local/engine`."""
        return get_json(self.port, ENGINE_PATH)

    def chat(self, text: str, client: str = "", **extra: Any) -> tuple[int, bytes]:
        """One chat completion; its status and body."""
        body = {"model": "tiny", "max_tokens": 8, "seed": 1,
                "messages": [{"role": "user", "content": text}], **extra}  # fmt: skip
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        headers = {"Content-Type": "application/json", "X-Client-Name": client}
        connection.request("POST", "/v1/chat/completions", json.dumps(body), headers)
        answer = connection.getresponse()
        data = answer.read()
        connection.close()
        return answer.status, data


def post(port: int, key: str | None = None, client: str = "", model: str = "tiny") -> int:
    """A short chat completion to the server at `port`; its status."""
    body = {"model": model, "max_tokens": 4, "messages": [{"role": "user", "content": "x"}]}
    headers = {"Content-Type": "application/json", "X-Client-Name": client}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    connection.request("POST", "/v1/chat/completions", json.dumps(body), headers)
    answer = connection.getresponse()
    answer.read()
    connection.close()
    return answer.status


def get_json(port: int, path: str, key: str | None = None) -> dict[str, Any]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    connection.request("GET", path, headers=headers)
    answer = connection.getresponse()
    data = json.loads(answer.read())
    connection.close()
    return data


@contextmanager
def resident_server(
    gguf: Path,
    keep_alive: float,
    load_now: bool = True,
    reload: threading.Event | None = None,
    sequences: int = 1,
    switcher: Switcher | None = None,
) -> Iterator[Served]:
    """The tiny model behind a `ResidentBackend` served on a free loopback port; a load after
    the first waits for `reload` when one is given; `switcher` resolves switches."""
    opened: list[object] = []

    def opener() -> LlamaCppBackend:
        if opened and reload is not None:
            assert reload.wait(60), "the test never let the load go on"
        opened.append(None)
        return open_tiny(gguf, sequences=sequences)

    resident = ResidentBackend(opener, keep_alive, load_now, {"ram": 1})
    gate = Gate(resident)
    service = Service(resident, ("tiny",), GenerationSettings(), stream=gate, instance="t1",
                      switcher=switcher)  # fmt: skip
    server = make_server(service, Guard("127.0.0.1", 0, None))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Served(server, resident, gate)
    finally:
        gate.open.set()
        if reload is not None:
            reload.set()
        server.stop()
        thread.join(timeout=10)
        resident.close()


def send(port: int, path: str, body: Any, key: str | None = None) -> tuple[int, dict[str, Any]]:
    """POST `body` as JSON to `path`; the status and the JSON answer."""
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    connection.request("POST", path, json.dumps(body), headers)
    answer = connection.getresponse()
    data = json.loads(answer.read())
    connection.close()
    return answer.status, data
