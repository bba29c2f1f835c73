"""Which addresses gptoss-local will connect to, in one place.

Downloads (the manifest check, `HF_ENDPOINT`, redirects): https anywhere, clear-text http only to
this machine. A chat server named for the OpenAI-compatible client (`--base-url`) may also be
reached over http on the local network (another PC running `gptoss-local serve`), since a LAN
server rarely has a certificate; http to anywhere else needs the user's explicit
`--allow-http`. Never a URL or name with a control character.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import SplitResult, urlsplit

# Names that only a local network resolves: mDNS, home routers, RFC 8375, RFC 6762 and ICANN's
# private-use TLD. A single-label name ("gpu-box") is local by definition.
LAN_SUFFIXES = (".local", ".lan", ".home.arpa", ".internal", ".localdomain")

# The routes a gptoss-local engine (`serve`) answers beside the APIs, which its own clients use
# (`find_engine`, `ps`, the OpenAI client over a shared engine: `backends.openai.engine_api`).
ENGINE_PATH = "/gptoss-local/engine"  # GET: the engine's id, model, and who holds it
PREFILL_PATH = "/gptoss-local/prefill"  # POST a chat body: {"evaluated": tokens}
COUNT_PATH = "/gptoss-local/count"  # POST a chat body: {"tokens": the prompt's count}
TOKENIZE_PATH = "/gptoss-local/tokenize"  # POST {"text", "special"}: {"tokens": [ids]}
SWITCH_PATH = "/gptoss-local/engine/switch"  # POST {"model"} or {"model_path"}: the new state
ENGINE_OBJECT = "gptoss-local.engine"  # the `object` an engine's state answers with
# The field of a chat request, and of its tool calls, that only our engine reads: what Chat
# Completions cannot carry (the built-in tools, tools in namespaces, the date, each call's
# channel). Our client sends it only to a server whose state answered as ours.
OURS_FIELD = "gptoss_local"


def has_control_character(text: str) -> bool:
    """True when `text` holds a C0/C1 control character or DEL (never valid in a URL or name)."""
    return any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in text)


def is_loopback_host(host: str | None) -> bool:
    """True for `localhost` and loopback addresses (127.0.0.0/8, ::1): traffic that stays here."""
    if not host:
        return False
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def is_lan_host(host: str | None) -> bool:
    """True for addresses and names of the local network: private and link-local addresses
    (10/8, 172.16/12, 192.168/16, 169.254/16, fc00::/7, fe80::/10), single-label names and the
    local-only suffixes (`.local`, `.lan`, `.home.arpa`, `.internal`, `.localdomain`)."""
    if not host:
        return False
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        name = host.lower().rstrip(".")
        return bool(name) and ("." not in name or name.endswith(LAN_SUFFIXES))
    return (address.is_private or address.is_link_local) and not address.is_unspecified


def url_problem(url: str) -> str | None:
    """Why `url` must not be fetched, or None when it may: https://, or http:// to loopback."""
    parts = _split(url)
    if isinstance(parts, str):
        return parts
    if parts.scheme == "https" or (parts.scheme == "http" and is_loopback_host(parts.hostname)):
        return None
    return "only https:// addresses are used (http:// only for this machine)"


def server_url_problem(url: str, allow_http: bool = False) -> str | None:
    """Why the chat server at `url` must not be used, or None when it may: https:// anywhere,
    http:// to this machine or the local network, http:// elsewhere only with `allow_http`."""
    parts = _split(url)
    if isinstance(parts, str):
        return parts
    if parts.scheme not in ("http", "https"):
        return "the address must start with https:// or http://"
    if not parts.hostname:
        return "the address has no host name"
    if parts.scheme == "https" or allow_http:
        return None
    if is_loopback_host(parts.hostname) or is_lan_host(parts.hostname):
        return None
    return (
        f"http:// to {parts.hostname} would carry your chats and key unencrypted beyond this "
        "network: use https://, or add --allow-http if it is a server of your own network"
    )


def _split(url: str) -> SplitResult | str:
    """The URL's parts, or why it cannot be read."""
    if has_control_character(url):
        return "it holds a control character"
    if any(c.isspace() for c in url):
        return "it holds a space (write a space in an address as %20)"
    try:
        parts = urlsplit(url)
        parts.hostname  # noqa: B018  # raises on an unclosed [ of an IPv6 address
        parts.port  # noqa: B018  # raises on a port that is not a number
    except ValueError as exc:
        return str(exc)
    return parts
