"""The compatibility tests' server (one per test module) and their guard against the network:
each client talks to `serve` on loopback only, and any try to look up or reach another host
fails the test (a price list fetched at import, a trace uploaded, a key checked with OpenAI)."""

from __future__ import annotations

import errno
import ipaddress
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from serve_helpers import Running, running_server

pytest.register_assert_rewrite("compat_helpers")  # before its import: its checks explain themselves
from compat_helpers import Recording, cities  # noqa: E402


@pytest.fixture(scope="module")
def served(tiny_gguf: Path) -> Iterator[Running]:
    with running_server(tiny_gguf, steer=Recording) as running:
        yield running


@pytest.fixture(autouse=True)
def fresh_record(served: Running) -> None:
    """The backend's record and the tool's calls start empty in each test."""
    served.seen.conversations.clear()
    assert isinstance(served.steering, Recording)
    served.steering.requests.clear()
    cities.clear()


def local(host: object) -> bool:
    """Whether `host`, as getaddrinfo or connect takes it (str, bytes or None), is this machine."""
    name = host.decode() if isinstance(host, bytes) else host
    if name is None or name == "localhost":
        return True
    try:
        return ipaddress.ip_address(str(name)).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fail any try to look up or reach a host past loopback, from any thread."""
    tries: list[object] = []
    getaddrinfo, connect = socket.getaddrinfo, socket.socket.connect

    def resolve(host: Any, *args: Any, **kwargs: Any) -> Any:
        if not local(host):
            tries.append(host)
            raise socket.gaierror(socket.EAI_NONAME, "offline test")
        return getaddrinfo(host, *args, **kwargs)

    def reach(sock: socket.socket, address: Any) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and not local(address[0]):
            tries.append(address)
            raise OSError(errno.ENETUNREACH, "offline test")
        connect(sock, address)

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    monkeypatch.setattr(socket.socket, "connect", reach)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-unused")  # as a user's shell has one
    for tracing in ("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2", "LOGFIRE_TOKEN"):
        monkeypatch.delenv(tracing, raising=False)
    yield
    assert tries == []
