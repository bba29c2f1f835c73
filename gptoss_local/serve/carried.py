"""Reasoning that leaves with a reply and comes back with the next request.

OpenAI's Responses API hands a client that keeps no state (`store: false`) its reasoning as
`encrypted_content`, and the client sends it back so that a tool chain keeps its chain of
thought. Nothing here leaves the machine, so the blob is not encrypted: it is the chain of
thought itself, as base64 of a small JSON object, marked as this server's.
"""

from __future__ import annotations

import base64
import binascii
import json

MARK = "gptoss-local/reasoning"


def seal(reasoning: str) -> str:
    """The `encrypted_content` of a reasoning item that holds `reasoning`."""
    data = json.dumps({"kind": MARK, "text": reasoning}, ensure_ascii=False)
    return base64.b64encode(data.encode()).decode("ascii")


def unseal(blob: object) -> str | None:
    """The reasoning a blob of `seal`'s holds; None for anything else (another server's
    encrypted reasoning, which no one here can read)."""
    if not isinstance(blob, str):
        return None
    try:
        found = json.loads(base64.b64decode(blob, validate=True).decode())
    except (binascii.Error, ValueError):  # UnicodeDecodeError and JSONDecodeError too
        return None
    if not isinstance(found, dict) or found.get("kind") != MARK:
        return None
    text = found.get("text")
    return text if isinstance(text, str) else None
