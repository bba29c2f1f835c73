"""A request body, from its headers to checked JSON.

- Only a body with one plain decimal `Content-Length` within `MAX_BODY` is read: `int()`
  would take "-1" (read until the client closes: no cap at all), "+5" or " 5", and a chunked
  body has no length to check before reading it.
- JSON may carry a lone surrogate as an escape (`"\\ud800"`), which `json.loads` accepts
  but is not text: it would fail later, when the prompt is encoded. Every string is checked
  here, and the 400 names the field that holds one.
"""

from __future__ import annotations

import json
import re
from email.message import Message
from typing import Any

from gptoss_local.serve.errors import ApiError, bad_request

MAX_BODY = 16 * 1024 * 1024  # far above any context's worth of text
_LENGTH = re.compile(r"[0-9]{1,20}")  # ASCII digits only (int() takes "-1", "+5", "1_0")
# A lone surrogate comes from a \uD800-\uDFFF escape or from the raw bytes json.loads lets
# through (it decodes bytes with "surrogatepass"); a body with neither needs no walk.
_MAYBE_SURROGATE = re.compile(rb"\\u[dD][89abcdefABCDEF]|\xed[\xa0-\xbf]")


def body_length(headers: Message) -> int:
    """The body's length, or an `ApiError` (411, 400 or 413) when it cannot be read safely;
    the connection must then be closed, as the body (if any) was not read."""
    if headers.get("Transfer-Encoding") is not None:
        raise ApiError(411, "send the body with a Content-Length (chunked bodies are not "
                       "accepted)", "length_required")  # fmt: skip
    values = headers.get_all("Content-Length") or []
    if not values:
        raise ApiError(411, "send the body with a Content-Length", "length_required")
    text = values[0].strip()
    if len(set(v.strip() for v in values)) > 1 or not _LENGTH.fullmatch(text):
        raise bad_request("Content-Length must be one whole number of bytes", None,
                          "invalid_content_length")  # fmt: skip
    length = int(text)
    if length > MAX_BODY:
        raise ApiError(413, f"the body is over {MAX_BODY // 2**20} MiB", "body_too_large")
    return length


def parse_json(raw: bytes, content_type: str | None) -> Any:
    """The body as JSON, with every string valid text (see the module's docstring)."""
    kind = (content_type or "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise ApiError(415, "send the body as application/json", "unsupported_media_type")
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise ApiError(400, f"the body is not valid JSON: {exc}", "invalid_json") from None
    where = lone_surrogate(data) if _MAYBE_SURROGATE.search(raw) else None
    if where is not None:
        raise bad_request(f"{where} holds a lone surrogate (a \\ud800-\\udfff escape without "
                          "its pair), which is not text: send valid UTF-8", where,
                          "invalid_text")  # fmt: skip
    return data


def lone_surrogate(data: Any) -> str | None:
    """The path of the first string (or key) in `data` that is not valid text, e.g.
    `messages[0].content`; None when all are. Iterative: JSON may nest deeper than Python
    recurses."""
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, str):
            if not _is_text(value):
                return path or "the body"
        elif isinstance(value, dict):
            for key, item in value.items():
                where = f"{path}.{key}" if path else key
                if not _is_text(key):
                    return f"a key in {path or 'the body'}"
                stack.append((where, item))
        elif isinstance(value, list):
            stack.extend((f"{path}[{index}]", item) for index, item in enumerate(value))
    return None


def _is_text(value: str) -> bool:
    if value.isascii():
        return True
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
