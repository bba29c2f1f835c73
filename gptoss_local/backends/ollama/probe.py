"""What answers at an address: Ollama (new enough or not), another HTTP server, or not HTTP.

Plain `http.client` with short timeouts, loopback or whatever OLLAMA_HOST names; the `ollama`
Python client has no version call and would be a heavy import for `doctor`.
"""

from __future__ import annotations

import http.client
import json
import re
import socket
from dataclasses import dataclass
from typing import Literal

from gptoss_local.i18n import _

DEFAULT_HOST = "127.0.0.1:11434"
MIN_VERSION = (0, 11, 0)  # the first series that runs gpt-oss

ProbeKind = Literal["ollama", "old", "foreign_http", "not_http", "closed"]


@dataclass(frozen=True)
class Probe:
    """The result of looking at one address.

    Attributes:
        kind: "ollama" (usable), "old" (Ollama older than 0.11), "foreign_http" (an HTTP server
            that is not Ollama), "not_http" (a listener that does not speak HTTP), "closed".
        version: Ollama's version, when it is Ollama.
        detail: Words for the user about what was found.
    """

    kind: ProbeKind
    version: str | None = None
    detail: str = ""


def parse_host(value: str) -> tuple[str, int]:
    """OLLAMA_HOST as Ollama reads it: `[http://]host[:port]`, default port 11434.

    A wildcard bind address (0.0.0.0, ::) is reached through loopback.
    """
    text = re.sub(r"^[a-zA-Z]+://", "", value.strip()).rstrip("/")
    host, port = text, 11434
    if text.startswith("["):  # [::1]:port
        host, _bracket, rest = text[1:].partition("]")
        port = int(rest[1:]) if rest.startswith(":") else port
    elif text.count(":") == 1:
        host, _colon, given = text.partition(":")
        port = int(given) if given else port
    if host in ("", "0.0.0.0", "::"):
        host = "127.0.0.1"
    return host, port


def version_tuple(version: str) -> tuple[int, int, int] | None:
    """(major, minor, patch) of "0.11.4" or "0.12.0-rc1"; None if it is not a version."""
    match = re.match(r"^v?(\d+)\.(\d+)(?:\.(\d+))?", version.strip())
    if not match:
        return None
    return int(match[1]), int(match[2]), int(match[3] or 0)


def supports_gpt_oss(version: str) -> bool:
    """Whether an Ollama of this version runs gpt-oss; "0.0.0" is a source build, allowed."""
    parsed = version_tuple(version)
    return parsed is not None and (parsed >= MIN_VERSION or parsed == (0, 0, 0))


def probe(host: str, port: int, timeout: float = 1.0) -> Probe:
    """Look at `host:port` without changing anything there."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except OSError:
        return Probe("closed", detail=_("nothing listening"))
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.request("GET", "/api/version", headers={"Accept": "application/json"})
        response = conn.getresponse()
        body = response.read(65536)
        server = response.getheader("Server") or ""
    except (OSError, http.client.HTTPException):
        return Probe("not_http", detail=_("a program that does not answer HTTP"))
    finally:
        conn.close()
    version = _version_from(body) if response.status == 200 else None
    if version is None:
        if server:
            detail = _("an HTTP server ({server}) answering {status} to /api/version")
        else:
            detail = _("an HTTP server answering {status} to /api/version")
        return Probe("foreign_http", detail=detail.format(server=server, status=response.status))
    if not supports_gpt_oss(version):
        return Probe("old", version, f"Ollama {version}")
    return Probe("ollama", version, f"Ollama {version}")


def _version_from(body: bytes) -> str | None:
    try:
        data = json.loads(body)
    except ValueError:
        return None
    version = data.get("version") if isinstance(data, dict) else None
    if isinstance(version, str) and version_tuple(version) is not None:
        return version
    return None


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on now (another program could still take it before Ollama)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])
