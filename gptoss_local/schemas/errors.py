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


class SchemaLoop(SchemaError):
    """Refs that loop with no way out (`empty`: no finite value matches the schema), or that
    come back to themselves before any text is written, which llama.cpp's grammar cannot
    hold. `loop` lists the refs as the schema writes them, in order (``#/$defs/a``)."""

    def __init__(self, path: str, loop: list[str], empty: bool, bare: bool = False) -> None:
        chain = " -> ".join([*loop, loop[0]])
        if empty and len(loop) == 1:
            why = f"{loop[0]} " + (
                "refers only to itself" if bare else "needs itself with no way out"
            )
        elif empty:
            why = f"{chain} loops with no way out"
        elif len(loop) == 1:
            why = f"{loop[0]} can be itself before any value is written"
        else:
            why = f"{chain} comes back before any value is written"
        tail = "no finite value matches the schema" if empty else "the grammar cannot hold that"
        ValueError.__init__(self, f"{why} (at {path}): {tail}")
        self.keyword, self.path, self.loop, self.empty = "$ref", path, loop, empty
