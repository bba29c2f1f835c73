"""The error for a schema the engine cannot hold an answer to, and how it names places."""

from __future__ import annotations

import json
import re

_PLAIN = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")


class SchemaError(ValueError):
    """A keyword (or a value of one) that the grammar could not hold, so the answer would be
    held to less than the schema says. `keyword` names it, `path` is where it is (JSONPath,
    ``$.properties.tags``)."""

    def __init__(self, keyword: str, path: str, why: str = "") -> None:
        message = f"{keyword!r} at {path} is not supported"
        super().__init__(f"{message}: {why}" if why else message)
        self.keyword = keyword
        self.path = path


def at(path: str, key: str) -> str:
    """`path` one key further down (``$.a`` and ``b`` give ``$.a.b``; odd keys in brackets)."""
    return f"{path}.{key}" if _PLAIN.fullmatch(key) else f"{path}[{json.dumps(key)}]"
