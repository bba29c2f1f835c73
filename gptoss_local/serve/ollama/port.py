"""Who answers on Ollama's port when `serve --ollama` cannot take it: Ollama itself (`GET /`
says "Ollama is running", `/api/version` its version), another gptoss-local serve (which says
the same, under its own Server header), or another program."""

from __future__ import annotations

import http.client
import json
from dataclasses import dataclass
from typing import Literal

OLLAMA_PORT = 11434  # where Ollama's apps look (OLLAMA_HOST's default)
PROBE_SECONDS = 2.0  # a server that has not answered by then is not one Ollama's apps can use
RUNNING = "Ollama is running"

HolderKind = Literal["ollama", "gptoss-local", "other"]


@dataclass(frozen=True)
class Holder:
    """What holds the port: its kind, and the version an Ollama server reports ("" unknown)."""

    kind: HolderKind
    version: str = ""


def holder(port: int, host: str = "127.0.0.1") -> Holder:
    """Ask what answers on `host:port` (something does: binding it failed)."""
    try:
        status, server, text = _get(host, port, "/")
    except (OSError, http.client.HTTPException):
        return Holder("other")
    if status != 200 or text.strip() != RUNNING:
        return Holder("other")
    if server.startswith("gptoss-local"):
        return Holder("gptoss-local")
    return Holder("ollama", _version(host, port))


def _version(host: str, port: int) -> str:
    try:
        status, _server, text = _get(host, port, "/api/version")
        version = json.loads(text).get("version") if status == 200 else None
    except (OSError, http.client.HTTPException, ValueError, AttributeError):
        return ""
    return version if isinstance(version, str) else ""


def _get(host: str, port: int, path: str) -> tuple[int, str, str]:
    connection = http.client.HTTPConnection(host, port, timeout=PROBE_SECONDS)
    try:
        connection.request("GET", path)
        answer = connection.getresponse()
        text = answer.read(64 * 1024).decode("utf-8", "replace")
        return answer.status, answer.getheader("Server") or "", text
    finally:
        connection.close()
