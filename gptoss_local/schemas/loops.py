"""Refs that loop with no way out, found in a schema as `keywords.prepare` writes it.

A grammar built from ``{"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}`` has a rule
that is only itself: llama.cpp refuses it once the request has waited for the model, and a loop
that does consume text (an object whose required property is the object again) has no finite
answer, so the model would write until it ran out of tokens. Two checks, on the prepared nodes
(each one a `$ref`, an `anyOf`, an `enum` or a typed node):

- every definition has a finite value: one that needs only definitions already known to have
  one (an `anyOf` needs one branch; an object its required properties; an array its
  `prefixItems`, or its `items` when `minItems` is above 0);
- no definition can be itself before a character is written (through `$ref` and `anyOf` only:
  every typed node starts with a character), which llama.cpp refuses as left recursion.
"""

from __future__ import annotations

from typing import Any

from gptoss_local.schemas.errors import SchemaLoop

_DEFS = "#/$defs/"


def check_loops(defs: dict[str, Any], names: dict[str, str], places: dict[str, str]) -> None:
    """Refuse a loop of refs with no way out, or one that comes back before any text.

    Args:
        defs: The prepared definitions by key (``d0``, ...).
        names: Each key's ref as the schema writes it (``#/$defs/a``).
        places: Each key's place in the schema (``$.$defs.a``).

    Raises:
        SchemaLoop: naming the loop's refs in order, at the first one's place.
    """
    finite: set[str] = set()
    grew = True
    while grew:
        grew = False
        for key, node in defs.items():
            if key not in finite and _finite(node, finite):
                finite.add(key)
                grew = True
    for key in defs:
        if key not in finite:
            loop = _loop(key, lambda k: _blocking(defs[k], finite))
            bare = "$ref" in defs[loop[0]]
            raise SchemaLoop(places[loop[0]], [names[k] for k in loop], empty=True, bare=bare)
    for key in defs:
        loop = _cycle_from(key, lambda k: _leading(defs[k]))
        if loop:
            raise SchemaLoop(places[loop[0]], [names[k] for k in loop], empty=False)


def _key(node: dict[str, Any]) -> str:
    return str(node["$ref"])[len(_DEFS) :]


def _finite(node: Any, finite: set[str]) -> bool:
    """Whether `node` has a finite value, given the definitions in `finite` have."""
    if not isinstance(node, dict):
        return True
    if "$ref" in node:
        return _key(node) in finite
    if "anyOf" in node:
        return any(_finite(branch, finite) for branch in node["anyOf"])
    if node.get("type") == "object":
        properties = node.get("properties", {})
        return all(_finite(properties[name], finite) for name in node.get("required", []))
    if node.get("type") == "array":
        if "prefixItems" in node:
            return all(_finite(item, finite) for item in node["prefixItems"])
        return not node.get("minItems") or _finite(node.get("items"), finite)
    return True


def _blocking(node: Any, finite: set[str]) -> list[str]:
    """The definitions without a finite value that keep `node` from having one."""
    if not isinstance(node, dict) or _finite(node, finite):
        return []
    if "$ref" in node:
        return [_key(node)]
    if "anyOf" in node:
        return [k for branch in node["anyOf"] for k in _blocking(branch, finite)]
    if node.get("type") == "object":
        properties = node.get("properties", {})
        return [k for name in node.get("required", []) for k in _blocking(properties[name], finite)]
    if node.get("type") == "array":
        items = node.get("prefixItems", [node.get("items")])
        return [k for item in items for k in _blocking(item, finite)]
    return []


def _leading(node: Any) -> list[str]:
    """The definitions `node` can be before it writes a character."""
    if not isinstance(node, dict):
        return []
    if "$ref" in node:
        return [_key(node)]
    return [k for branch in node.get("anyOf", []) for k in _leading(branch)]


def _loop(start: str, following: Any) -> list[str]:
    """The loop reached from `start` by always taking the first of `following(key)` (each
    definition without a finite value has one, since every leaf has a finite value)."""
    path: list[str] = []
    key = start
    while key not in path:
        path.append(key)
        key = following(key)[0]
    return path[path.index(key) :]


def _cycle_from(start: str, following: Any) -> list[str]:
    """A loop from `start` back to itself along `following` (depth first), or []."""
    stack: list[tuple[str, list[str]]] = [(start, [start])]
    seen: set[str] = set()
    while stack:
        key, path = stack.pop()
        for nxt in following(key):
            if nxt == start:
                return path
            if nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, [*path, nxt]))
    return []
