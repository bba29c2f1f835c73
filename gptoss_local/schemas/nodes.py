"""The nodes of one JSON type as the converter is given them (see `schema`): each keyword of
the type either held, rewritten tighter, or refused by name."""

from __future__ import annotations

import math
from typing import Any, Protocol

from gptoss_local.schemas.errors import SchemaError, at
from gptoss_local.schemas.pattern import translate_pattern

# llama.cpp turns a repetition of more than this many into "unbounded" (llama-grammar.cpp,
# MAX_REPETITION_THRESHOLD): a larger maximum is lowered to it, a larger minimum refused.
MOST_REPEATS = 2000
# The converter writes integers of at most 16 digits.
INT_LIMIT = 10**16 - 1
TYPES = ("object", "array", "string", "number", "integer", "boolean", "null")
ANY: dict[str, Any] = {"type": ["object", "array", "string", "number", "boolean", "null"]}
FORMATS = ("date", "time", "date-time", "uuid", "uuid1", "uuid2", "uuid3", "uuid4", "uuid5")
# The validation keywords of JSON Schema drafts 4 to 2020-12, by the type they apply to.
FAMILY = {
    "object": {"properties", "required", "additionalProperties", "patternProperties",
               "propertyNames", "minProperties", "maxProperties", "dependentRequired",
               "dependentSchemas", "dependencies", "unevaluatedProperties"},
    "array": {"items", "prefixItems", "additionalItems", "minItems", "maxItems", "uniqueItems",
              "contains", "minContains", "maxContains", "unevaluatedItems"},
    "string": {"minLength", "maxLength", "pattern", "format"},
    "number": {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"},
}  # fmt: skip
FAMILY["integer"] = FAMILY["number"]
GENERAL = {"type", "enum", "const", "$ref", "allOf", "anyOf", "oneOf", "not", "if", "then",
           "else", "$dynamicRef", "$recursiveRef"}  # fmt: skip
VALIDATION = GENERAL.union(*FAMILY.values())


class Walker(Protocol):
    """What a node's children are walked with (`schema._Walk`)."""

    def node(self, node: Any, path: str) -> dict[str, Any]: ...


def object_node(own: dict[str, Any], walk: Walker, path: str) -> dict[str, Any]:
    """An object node from its keywords `own`: properties walked, `required` checked against
    them, no other keys unless `additionalProperties` allows them."""
    properties = own.get("properties", {})
    if not isinstance(properties, dict):
        raise SchemaError("properties", path, "must be an object")
    required = own.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise SchemaError("required", path, "must be a list of names")
    missing = [r for r in required if r not in properties]
    if missing:
        raise SchemaError("required", path,
                          f"{missing[0]!r} is required but not among the properties")  # fmt: skip
    extra = own.get("additionalProperties", not properties)
    closed = extra is False
    _trivial(own, path, closed, len(properties), len(set(required)))
    where = at(path, "properties")
    out: dict[str, Any] = {
        "type": "object",
        "properties": {k: walk.node(v, at(where, k)) for k, v in properties.items()},
        "required": list(dict.fromkeys(required)),
    }
    if extra is True or (isinstance(extra, dict) and not (extra.keys() & VALIDATION)):
        if not properties:
            return {"type": "object"}
        out["additionalProperties"] = dict(ANY)
    elif not closed:
        out["additionalProperties"] = walk.node(extra, at(path, "additionalProperties"))
    else:
        out["additionalProperties"] = False
    return out


def _trivial(own: dict[str, Any], path: str, closed: bool, count: int, needed: int) -> None:
    """Refuse object keywords the grammar cannot hold, unless every answer meets them anyway."""
    for keyword in ("patternProperties", "propertyNames", "dependentRequired",
                    "dependentSchemas", "dependencies"):  # fmt: skip
        if own.get(keyword):
            raise SchemaError(keyword, path)
    low, high = own.get("minProperties", 0), own.get("maxProperties")
    if not (isinstance(low, int) and low <= needed):
        raise SchemaError("minProperties", path)
    if high is not None and not (closed and isinstance(high, int) and high >= count):
        raise SchemaError("maxProperties", path)
    if own.get("unevaluatedProperties", True) is not True and not closed:
        raise SchemaError("unevaluatedProperties", path)


def _count(own: dict[str, Any], keyword: str, path: str, default: int | None) -> int | None:
    value = own.get(keyword, default)
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise SchemaError(keyword, path, "must be a whole number of at least 0")
    return value


def _bounds(own: dict[str, Any], low: str, high: str, path: str) -> tuple[int, int | None]:
    least = _count(own, low, path, 0) or 0
    most = _count(own, high, path, None)
    if least > MOST_REPEATS:
        raise SchemaError(low, path, f"at most {MOST_REPEATS} can be held")
    if most is not None and most < least:
        raise SchemaError(high, path, f"is less than {low}")
    if most is not None and most > MOST_REPEATS:
        most = MOST_REPEATS  # only tighter: llama.cpp would read more as "any number"
    return least, most


def array_node(own: dict[str, Any], walk: Walker, path: str) -> dict[str, Any]:
    """An array node: items (any, if not given) with their counts, or a fixed tuple."""
    for keyword in ("contains", "additionalItems", "minContains", "maxContains"):
        if keyword in own:
            raise SchemaError(keyword, path)
    least, most = _bounds(own, "minItems", "maxItems", path)
    if own.get("uniqueItems") and (most is None or most > 1):
        raise SchemaError("uniqueItems", path)
    items, prefix = own.get("items", True), own.get("prefixItems")
    if isinstance(items, list):
        raise SchemaError("items", path, "a list of items: use prefixItems")
    if prefix is None:
        if own.get("unevaluatedItems", True) is not True:
            raise SchemaError("unevaluatedItems", path)
        out: dict[str, Any] = {"type": "array", "items": walk.node(items, at(path, "items"))}
        out["minItems"] = least
        if most is not None:
            out["maxItems"] = most
        return out
    if not isinstance(prefix, list) or not prefix:
        raise SchemaError("prefixItems", path, "must list schemas")
    if items is not False and "items" in own:
        raise SchemaError("items", path, "beside prefixItems only items: false")
    # The converter writes exactly the prefix's items: the counts must allow that many.
    if least > len(prefix) or (most is not None and most < len(prefix)):
        raise SchemaError("minItems" if least > len(prefix) else "maxItems", path,
                          "must allow exactly the prefixItems")  # fmt: skip
    where = at(path, "prefixItems")
    return {"type": "array", "prefixItems": [walk.node(s, f"{where}[{i}]")
                                             for i, s in enumerate(prefix)]}  # fmt: skip


def string_node(own: dict[str, Any], path: str) -> dict[str, Any]:
    """A string node: a pattern (rewritten), a format the grammar knows, or lengths."""
    if "pattern" in own or "format" in own:
        first = "pattern" if "pattern" in own else "format"
        for other in sorted(set(own) - {first}):
            raise SchemaError(other, path, f"not beside {first}")
    if "pattern" in own:
        pattern = own["pattern"]
        if not isinstance(pattern, str):
            raise SchemaError("pattern", path, "must be text")
        return {"type": "string", "pattern": translate_pattern(pattern, path)}
    if "format" in own:
        if own["format"] not in FORMATS:
            raise SchemaError("format", path,
                              f"{own['format']!r} (held: {', '.join(FORMATS[:4])})")  # fmt: skip
        return {"type": "string", "format": own["format"]}
    least, most = _bounds(own, "minLength", "maxLength", path)
    if least == 0 and most is None:
        return {"type": "string"}
    out: dict[str, Any] = {"type": "string", "minLength": least}
    if most is not None:
        out["maxLength"] = most
    return out


def number_node(own: dict[str, Any], kind: str, path: str) -> dict[str, Any]:
    """A number node; an integer's bounds as inclusive whole numbers (a number's are refused)."""
    step = own.get("multipleOf")
    if step is not None and not (kind == "integer" and step == 1):
        raise SchemaError("multipleOf", path)
    bounds = {k: own[k] for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
              if k in own}  # fmt: skip
    if not bounds:
        return {"type": kind}
    if kind == "number":
        keyword = sorted(bounds)[0]
        raise SchemaError(keyword, path, "only integers can be held to bounds")
    for keyword, value in bounds.items():
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not number or not math.isfinite(value):
            raise SchemaError(keyword, path, "must be a number (draft 6 or later)")
    low, high = -INT_LIMIT, INT_LIMIT
    if "minimum" in bounds:
        low = max(low, math.ceil(bounds["minimum"]))
    if "exclusiveMinimum" in bounds:
        low = max(low, math.floor(bounds["exclusiveMinimum"]) + 1)
    if "maximum" in bounds:
        high = min(high, math.floor(bounds["maximum"]))
    if "exclusiveMaximum" in bounds:
        high = min(high, math.ceil(bounds["exclusiveMaximum"]) - 1)
    if low > high:
        keyword = sorted(bounds)[0]
        raise SchemaError(keyword, path, "no integer is within the bounds")
    return {"type": "integer", "minimum": low, "maximum": high}
