"""What `doctor` says about Ollama: installed, running, version, gpt-oss tags. Fast and read-only.

It never starts a daemon; it only looks at OLLAMA_HOST (default 127.0.0.1:11434) with a short
timeout, and only when Ollama is installed or OLLAMA_HOST is set, so `doctor` stays quick and
opens no connection at all on a PC without Ollama.
"""

from __future__ import annotations

import http.client
import json
import os
from typing import Any

from gptoss_local.backends.base import BackendError
from gptoss_local.backends.ollama.daemon import find_executable
from gptoss_local.backends.ollama.probe import DEFAULT_HOST, Probe, parse_host, probe
from gptoss_local.i18n import _


def ollama_status(timeout: float = 0.5) -> dict[str, Any]:
    """The `engine.ollama` part of the doctor JSON (see docs/doctor-json.md)."""
    try:
        path: str | None = str(find_executable())
    except BackendError:
        path = None
    configured = os.environ.get("OLLAMA_HOST")
    host, port = parse_host(configured or DEFAULT_HOST)
    if path is None and not configured:
        # Nothing says Ollama is here: open no connection at all (doctor stays offline).
        found = Probe("closed", detail=_("not checked"))
    else:
        found = probe(host, port, timeout)
    running = found.kind in ("ollama", "old")
    return {
        "installed": path is not None,
        "path": path,
        "address": f"{host}:{port}",
        "running": running,
        "version": found.version,
        "supports_gpt_oss": found.kind == "ollama" if running else None,
        "listener": found.kind,  # ollama, old, foreign_http, not_http or closed
        "gpt_oss_tags": _gpt_oss_tags(host, port, timeout) if found.kind == "ollama" else [],
    }


def _gpt_oss_tags(host: str, port: int, timeout: float) -> list[str]:
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.request("GET", "/api/tags")
        data = json.loads(conn.getresponse().read())
        names = [str(m.get("name") or m.get("model")) for m in data.get("models", [])]
    except (OSError, http.client.HTTPException, ValueError, AttributeError):
        return []
    finally:
        conn.close()
    return sorted(n for n in names if n.startswith("gpt-oss"))


def status_line(status: dict[str, Any]) -> str:
    """One line for the text report."""
    where, version = status["address"], status["version"]
    if status["listener"] == "ollama":
        tags = ", ".join(status["gpt_oss_tags"]) or _("none (gptoss-local pull --backend ollama)")
        return _("Ollama {version} running at {where}  ·  gpt-oss tags: {tags}").format(
            version=version, where=where, tags=tags
        )
    if status["listener"] == "old":
        return _("Ollama {version} at {where} is too old for gpt-oss (needs 0.11 or newer)").format(
            version=version, where=where
        )
    if status["listener"] in ("foreign_http", "not_http"):
        if status["installed"]:
            return _("Ollama: {where} is held by a program that is not Ollama").format(where=where)
        return _("Ollama: {where} is held by a program that is not Ollama; not installed").format(
            where=where
        )
    if status["installed"]:
        return _("Ollama installed ({path}), not running (started when needed)").format(
            path=status["path"]
        )
    return _("Ollama: not installed (optional: https://ollama.com/download)")
