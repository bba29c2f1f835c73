"""Which JSON Schema keywords the engine can hold an answer to, and the schema as the converter
is given it.

llama-cpp-python's `SchemaConverter` turns a schema into a grammar, but it reads only some
keywords and silently skips the rest (`minimum`, `uniqueItems`, `patternProperties`, a
`properties` beside `anyOf`, ...): a grammar from a half-read schema would let through answers
the schema refuses. `prepare()` walks the schema as the converter will, refuses each keyword
the grammar could not hold (`SchemaError` names it and where it is), and hands the converter
only shapes it reads exactly: one canonical form per node, every `$ref` moved under one
`$defs` with names of its own. What it changes only tightens: an object without
`additionalProperties` gets no other keys, an `allOf` of objects makes all their properties
required, a `maxLength` beyond what llama.cpp repeats is lowered to it. Annotations (`title`,
`description`, `default`, `examples`, ...) and keywords this validator does not know are
ignored, as validators ignore them; a keyword of another type than the node's has no effect and
is dropped.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from gptoss_local.schemas.errors import SchemaError, at
from gptoss_local.schemas.loops import check_loops
from gptoss_local.schemas.nodes import (
    ANY,
    FAMILY,
    GENERAL,
    TYPES,
    VALIDATION,
    array_node,
    number_node,
    object_node,
    string_node,
)


def prepare(schema: Any, prefix: str = "d") -> dict[str, Any]:
    """The schema as the converter should read it: canonical nodes, refs as
    ``#/$defs/{prefix}N``.

    Raises:
        SchemaError: a keyword (or a value of one) the grammar cannot hold, with its path.
    """
    walk = _Walk(schema, prefix)  # builds new nodes: the schema given is not changed
    try:
        root = walk.node(walk.root, "$")
    except RecursionError:
        raise SchemaError("type", "$", "the schema nests too deeply") from None
    names = {key: ref for ref, key in walk.refs.items()}
    check_loops(walk.defs, names, walk.places)
    if walk.defs:
        root = {**root, "$defs": walk.defs}
    return root


def check_schema(schema: Any) -> None:
    """Refuse a schema the engine cannot hold an answer to (nothing is loaded for this).

    Raises:
        SchemaError: naming the keyword and where it is.
    """
    prepare(schema)


class _Walk:
    def __init__(self, root: Any, prefix: str) -> None:
        self.root = root
        self.prefix = prefix
        self.defs: dict[str, Any] = {}
        self.refs: dict[str, str] = {}  # a ref as written -> its key in defs
        self.places: dict[str, str] = {}  # a key in defs -> where its target is

    def node(self, node: Any, path: str) -> dict[str, Any]:
        if node is True:
            return dict(ANY)
        if node is False:
            raise SchemaError("false", path, "a false schema accepts nothing")
        if not isinstance(node, dict):
            raise SchemaError("type", path, "a schema must be an object")
        used = node.keys() & VALIDATION
        for keyword in sorted(used & {"not", "if", "then", "else", "$dynamicRef", "$recursiveRef"}):
            raise SchemaError(keyword, path)
        if "$id" in node and path != "$":
            raise SchemaError("$id", path, "refs are read from the root only")
        if not used:
            return dict(ANY)
        if "$ref" in used:
            return self.ref(node, used, path)
        if used & {"anyOf", "oneOf"}:
            return self.union(node, used, path)
        kind = node.get("type")
        if isinstance(kind, list):
            return self.type_list(node, kind, path)
        if "const" in used or "enum" in used:
            return self.literals(node, used, path)
        if "allOf" in used:
            return self.all_of(node, used, path)
        return self.typed(node, self.kind(node, used, path), path)

    def kind(self, node: dict[str, Any], used: set[str], path: str) -> str:
        kind = node.get("type")
        if kind is None:
            families = {t for t in ("object", "array", "string", "number") if used & FAMILY[t]}
            if len(families) != 1:
                raise SchemaError("type", path, "say which type the value has")
            return families.pop()
        if kind not in TYPES:
            raise SchemaError("type", path, f"{kind!r} is not a JSON type")
        return str(kind)

    def ref(self, node: dict[str, Any], used: set[str], path: str) -> dict[str, Any]:
        for keyword in sorted(used - {"$ref"}):
            raise SchemaError(keyword, path, "nothing beside $ref is read")
        ref = node["$ref"]
        if not isinstance(ref, str) or not ref.startswith("#"):
            raise SchemaError("$ref", path, "only refs inside the schema (#/...)")
        if ref not in self.refs:
            key = self.refs[ref] = f"{self.prefix}{len(self.refs)}"
            target, where = self.pointer(ref, path)
            self.places[key] = where
            self.defs[key] = {}  # a placeholder while the target (perhaps recursive) is walked
            self.defs[key] = self.node(target, where)
        return {"$ref": f"#/$defs/{self.refs[ref]}"}

    def pointer(self, ref: str, path: str) -> tuple[Any, str]:
        target, where = self.root, "$"
        for raw in ref[1:].split("/")[1:] if ref != "#" else []:
            part = unquote(raw).replace("~1", "/").replace("~0", "~")
            if isinstance(target, list) and part.isdigit() and int(part) < len(target):
                target, where = target[int(part)], f"{where}[{part}]"
            elif isinstance(target, dict) and part in target:
                target, where = target[part], at(where, part)
            else:
                raise SchemaError("$ref", path, f"{ref} points to nothing")
        return target, where

    def union(self, node: dict[str, Any], used: set[str], path: str) -> dict[str, Any]:
        keyword = "oneOf" if "oneOf" in used else "anyOf"
        for other in sorted(used - {keyword}):
            raise SchemaError(other, path, f"nothing beside {keyword} is read")
        options = node[keyword]
        if not isinstance(options, list) or not options:
            raise SchemaError(keyword, path, "must be a list of schemas")
        # oneOf is written as anyOf: an answer that two branches accept is caught by
        # check_answer, since the grammar cannot tell the branches apart.
        where = at(path, keyword)
        return {"anyOf": [self.node(o, f"{where}[{i}]") for i, o in enumerate(options)]}

    def type_list(self, node: dict[str, Any], kinds: list[Any], path: str) -> dict[str, Any]:
        for kind in kinds:
            if kind not in TYPES:
                raise SchemaError("type", path, f"{kind!r} is not a JSON type")
        rest = {k: v for k, v in node.items() if k != "type"}
        if "const" in rest or "enum" in rest:
            return self.literals({**rest, "type": kinds}, node.keys() & VALIDATION, path)
        if "allOf" in rest:
            raise SchemaError("allOf", path, "not beside a list of types")
        split = [{**rest, "type": kind} for kind in dict.fromkeys(kinds)]
        if len(split) == 1:
            return self.node(split[0], path)
        return {"anyOf": [self.node(branch, path) for branch in split]}

    def literals(self, node: dict[str, Any], used: set[str], path: str) -> dict[str, Any]:
        keyword = "const" if "const" in used else "enum"
        for other in sorted(used - {keyword, "type"}):
            if other not in GENERAL and other not in _family_of(node.get("type")):
                continue  # another type's keyword: no effect
            raise SchemaError(other, path, f"nothing beside {keyword} is read")
        values = [node["const"]] if keyword == "const" else node["enum"]
        if not isinstance(values, list) or not values:
            raise SchemaError(keyword, path, "must list at least one value")
        kinds = node.get("type")
        if kinds is not None:  # a value the type refuses can never be the answer
            allowed = kinds if isinstance(kinds, list) else [kinds]
            values = [v for v in values if any(_is(v, t) for t in allowed)]
            if not values:
                raise SchemaError(keyword, path, "no value has the type asked")
        return {"enum": values}

    def all_of(self, node: dict[str, Any], used: set[str], path: str) -> dict[str, Any]:
        parts = node["allOf"]
        where = at(path, "allOf")
        if not isinstance(parts, list) or not parts:
            raise SchemaError("allOf", path, "must be a list of schemas")
        others = used - {"allOf", "type"}
        if len(parts) == 1 and not others and node.get("type") is None:
            return self.node(parts[0], f"{where}[0]")
        if node.get("type", "object") != "object" or others:
            raise SchemaError("allOf", path, "only an allOf of objects with properties")
        properties: dict[str, Any] = {}
        for i, part in enumerate(parts):
            for name, schema in _object_part(part, self, f"{where}[{i}]").items():
                if name in properties:
                    raise SchemaError("allOf", path, f"two parts define {name!r}")
                properties[name] = schema
        # The converter requires every property of every part: only tighter.
        return self.typed({"type": "object", "properties": properties,
                           "required": list(properties)}, "object", path)  # fmt: skip

    def typed(self, node: dict[str, Any], kind: str, path: str) -> dict[str, Any]:
        used = node.keys() & VALIDATION
        for keyword in sorted(used - FAMILY.get(kind, set()) - {"type"}):
            if keyword in GENERAL:
                raise SchemaError(keyword, path)
        own = {k: node[k] for k in used & FAMILY.get(kind, set())}
        if kind == "object":
            return object_node(own, self, path)
        if kind == "array":
            return array_node(own, self, path)
        if kind == "string":
            return string_node(own, path)
        if kind in ("number", "integer"):
            return number_node(own, kind, path)
        return {"type": kind}


def _family_of(kinds: Any) -> set[str]:
    listed = kinds if isinstance(kinds, list) else [kinds] if kinds else list(FAMILY)
    return set().union(*(FAMILY.get(k, set()) for k in listed))


def _is(value: Any, kind: str) -> bool:
    if kind == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer()
        )
    checks: dict[str, Any] = {"object": dict, "array": list, "string": str, "boolean": bool,
                              "null": type(None)}  # fmt: skip
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, checks[kind])


def _object_part(part: Any, walk: _Walk, path: str) -> dict[str, Any]:
    """One allOf part's properties, walked: it must be an object schema with properties."""
    for _hop in range(32):  # a ref to a ref ...; a loop of them is refused below
        if not (
            isinstance(part, dict) and "$ref" in part and (part.keys() & VALIDATION) == {"$ref"}
        ):
            break
        part, path = walk.pointer(part["$ref"], path)
    if not isinstance(part, dict) or not isinstance(part.get("properties"), dict):
        raise SchemaError("allOf", path, "each part must be an object with properties")
    extra = (part.keys() & VALIDATION) - {"type", "properties", "required"}
    if part.get("type", "object") != "object" or extra:
        raise SchemaError("allOf", path, "a part may hold only type, properties and required")
    where = at(path, "properties")
    return {k: walk.node(v, at(where, k)) for k, v in part["properties"].items()}
