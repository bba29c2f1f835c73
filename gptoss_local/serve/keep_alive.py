"""Keep-alive durations as Ollama spells them (`serve --keep-alive`, a request's
`keep_alive`): light, for the command line's parser (`--help` imports it)."""

from __future__ import annotations

import math
import re

DEFAULT_KEEP_ALIVE = 300.0  # seconds, as Ollama's
# Go's duration units, which Ollama's keep_alive takes
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")


def parse_keep_alive(text: str) -> float:
    """Seconds from a keep-alive as Ollama spells it: a number of seconds ("300", "0",
    "-1"), a duration ("5m", "1h30m", "0.5s"), or "forever" (-1: never unload).

    Raises:
        ValueError: none of these.
    """
    word = text.strip().lower()
    if word in ("forever", "never", "inf"):
        return -1.0
    try:
        value = float(word)
    except ValueError:
        sign = -1.0 if word.startswith("-") else 1.0
        body = word.lstrip("+-")
        parts = _PART.findall(body)
        if not body or "".join(n + u for n, u in parts) != body:
            raise ValueError(f"not a duration: {text!r} (e.g. 300, 5m, 1h, 0, -1)") from None
        value = sign * sum(float(n) * _UNITS[u] for n, u in parts)
    if not math.isfinite(value):
        raise ValueError(f"not a duration: {text!r}")
    return value
