"""Tests of third-party clients must prove they stay on this machine: `refuse_the_network` makes
any name lookup or connection past loopback fail, from any thread, and records it."""

from __future__ import annotations

import errno
import ipaddress
import socket
from typing import Any

import pytest


def local(host: object) -> bool:
    """Whether `host`, as getaddrinfo or connect takes it (str, bytes or None), is this machine."""
    name = host.decode() if isinstance(host, bytes) else host
    if name is None or name == "localhost":
        return True
    try:
        return ipaddress.ip_address(str(name)).is_loopback
    except ValueError:
        return False


def refuse_the_network(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Patch lookups and connections past loopback to fail; returns the list of those tried
    (a test asserts it stays empty). An API key is set, as a user's shell has one, so that a
    client that would upload something (traces) really tries."""
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
    monkeypatch.setenv("OPENAI_API_KEY", "sk-unused")
    return tries
