"""Who may use the server: loopback unless a key is set, the Host header, the key, and CORS.

- Binding an address other than loopback needs an API key: the model is then reachable by the
  network, and a key is the least that keeps strangers out.
- The Host header must name the bound address (or, on loopback, a localhost alias): a web page
  that rebinds its own DNS name to 127.0.0.1 sends its own name and is refused (DNS rebinding).
- Browsers get no CORS headers unless `--cors ORIGIN` names their origin, so another site's
  script cannot read replies.
"""

from __future__ import annotations

import hmac
import ipaddress
import socket
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from gptoss_local.urls import is_lan_host, is_loopback_host

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
WILDCARDS = frozenset({"0.0.0.0", "::", ""})


def bind_problem(host: str, api_key: str | None) -> str | None:
    """Why the server must not listen on `host`, or None: only loopback goes without a key."""
    if is_loopback_host(host) or api_key:
        return None
    where = "every network interface" if host in WILDCARDS else host
    return (
        f"listening on {where} makes the model reachable from the network, so it needs a key: "
        "add --api-key KEY (clients send it as `Authorization: Bearer KEY`), or keep the "
        "default --host 127.0.0.1"
    )


@dataclass(frozen=True)
class Guard:
    """The checks every request passes.

    Args:
        host: The bound address.
        port: The bound port.
        api_key: The key clients must send, or None (loopback only).
        cors: Origins whose pages may read replies ("*" for any).
        allowed_hosts: Extra names clients may use in the Host header (a reverse proxy's, a
            LAN name this machine does not know itself by).
    """

    host: str
    port: int
    api_key: str | None = None
    cors: tuple[str, ...] = ()
    allowed_hosts: frozenset[str] = field(default_factory=frozenset)

    def host_ok(self, header: str | None) -> bool:
        """Whether the Host header names this server: its address and port (DNS rebinding)."""
        if not header:
            return False
        try:
            parts = urlsplit(f"//{header}")
            name, port = (parts.hostname or "").lower(), parts.port
        except ValueError:
            return False
        if port != self.port and not (port is None and self.port == 80):
            return False
        return self._name_ok(name.rstrip("."))

    def _name_ok(self, name: str) -> bool:
        bound = self.host.lower().strip("[]")
        if name == bound or name in self.allowed_hosts:
            return True
        if is_loopback_host(bound):
            return name in LOOPBACK_NAMES or is_loopback_host(name)
        if _is_address(name):  # a client that uses this machine's address, not a name
            return bound in WILDCARDS or name in LOOPBACK_NAMES
        # This machine's own name, bare or under a local-network suffix (gpu-box.lan).
        machine = socket.gethostname().lower().split(".")[0]
        return name == "localhost" or (name.split(".")[0] == machine and is_lan_host(name))

    def key_ok(self, authorization: str | None, api_key: str | None = None) -> bool:
        """Whether the request carries the key, when one is set: `Authorization: Bearer KEY`,
        or `x-api-key: KEY` as Anthropic's clients send it (`api_key`)."""
        if not self.api_key:
            return True
        expected = self.api_key.encode()
        if api_key is not None and hmac.compare_digest(api_key.strip().encode(), expected):
            return True
        scheme, _, given = (authorization or "").partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), expected)

    def cors_origin(self, origin: str | None) -> str | None:
        """The Access-Control-Allow-Origin value for a request from `origin`, or None."""
        if not origin or not self.cors:
            return None
        if "*" in self.cors:
            return "*"
        return origin if origin in self.cors else None


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True
