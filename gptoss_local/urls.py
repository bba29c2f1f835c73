"""Which addresses gptoss-local will fetch from: https anywhere, clear-text http only to this
machine, and never a URL or name with a control character. One rule for the manifest check,
`HF_ENDPOINT`, redirects and the OpenAI-compatible client alike."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit


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


def url_problem(url: str) -> str | None:
    """Why `url` must not be fetched, or None when it may: https://, or http:// to loopback."""
    if has_control_character(url):
        return "it holds a control character"
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError as exc:  # e.g. an unclosed [ of an IPv6 address
        return str(exc)
    if parts.scheme == "https" or (parts.scheme == "http" and is_loopback_host(host)):
        return None
    return "only https:// addresses are used (http:// only for this machine)"
