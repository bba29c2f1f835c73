"""A tool's JSON schema as the TypeScript-like text of the developer message.

The layout is openai-harmony's (the renderer OpenAI's reference inference uses, so the one
gpt-oss saw in training), byte for byte and with its quirks, all checked against the package
in tests/harmony/test_harmony_oracle_render.py:

- only ``oneOf`` makes a union (one ``| `` line per variant); ``anyOf``, ``allOf`` and
  ``$ref`` are not read, so a property with only ``anyOf`` is ``any``;
- an enum counts only with ``"type": "string"`` (its string values, quoted as they are);
  any other enum renders as its type (``number``, ``any`` without a type);
- ``items`` is never parenthesised: an array of ``["number", "string"]`` is
  ``number | string[]``;
- an object's description goes on a ``//`` line in front of its ``{``, so a nested object
  follows ``key: `` with an indented comment, and ``parameters.description`` follows ``(_: ``;
- descriptions, titles, examples and string defaults are written raw: no ``//`` on the
  second line of a multi-line description, no escaping inside ``"..."``; other defaults are
  compact JSON (``[1,2]``, ``{"a":1}``, ``1e-7``);
- an object without properties is ``{`` and ``}`` on two lines.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any

_NESTED = "    "  # deeper indent of an object's properties
_VARIANT = "   "  # deeper indent inside a variant of a oneOf


def signature(parameters: Any | None) -> str:
    """``() => any`` without a schema, else ``(_: TYPE) => any``."""
    if parameters is None:
        return "() => any"
    return f"(_: {ts_type(parameters, '')}) => any"


def check(schema: Any, where: str = "parameters") -> None:
    """Refuse a schema whose keywords have the wrong JSON types.

    Rendering never fails (openai-harmony renders what it cannot read as ``any``), so
    callers that take schemas from a person check them here to report the mistake.

    Raises:
        TypeError: Naming the first keyword of the wrong type.
    """
    if isinstance(schema, bool):
        return
    if not isinstance(schema, dict):
        raise TypeError(f"{where} must be a JSON object, not {type(schema).__name__}")
    expected: dict[str, type | tuple[type, ...]] = {"properties": dict, "required": list}
    expected |= {"enum": list, "oneOf": list, "anyOf": list, "allOf": list, "type": (str, list)}
    for key, kind in expected.items():
        if key in schema and not isinstance(schema[key], kind):
            raise TypeError(f"{where}.{key} has the wrong type ({type(schema[key]).__name__})")
    for key, value in schema.get("properties", {}).items():
        check(value, f"{where}.properties.{key}")
    for key in ("oneOf", "anyOf", "allOf"):
        for i, value in enumerate(schema.get(key, ())):
            check(value, f"{where}.{key}[{i}]")
    if isinstance(schema.get("items"), dict):
        check(schema["items"], f"{where}.items")


def ts_type(schema: Any, indent: str) -> str:
    """The type text of one schema, with nested lines indented by `indent`."""
    if not isinstance(schema, dict):
        return "any"
    variants = schema.get("oneOf")
    if isinstance(variants, list):
        return "".join(f"\n{indent} | {_variant(v, indent, _as_json)}" for v in variants)
    kind = schema.get("type")
    if isinstance(kind, list):
        names = ["number" if k == "integer" else k for k in kind if isinstance(k, str)]
        return " | ".join(names) if names else "any"
    if kind == "object":
        return _object(schema, indent)
    if kind == "string":
        values = schema.get("enum")
        values = values if isinstance(values, list) else []
        quoted = [f'"{v}"' for v in values if isinstance(v, str)]
        return " | ".join(quoted) if quoted else "string"
    if kind == "array":
        return f"{ts_type(schema['items'], indent)}[]" if "items" in schema else "Array<any>"
    return {"number": "number", "integer": "number", "boolean": "boolean"}.get(str(kind), "any")


def _variant(variant: Any, indent: str, default_text: Any, skip_description: Any = None) -> str:
    """One line of a oneOf: the type, ``| null`` when nullable, then its comments.

    `skip_description` is a description not to repeat (the property's own), or True to
    leave the description out altogether.
    """
    text = _nullable(variant, ts_type(variant, indent + _VARIANT))
    fields = variant if isinstance(variant, dict) else {}
    comments = []
    description = fields.get("description")
    if isinstance(description, str) and skip_description not in (True, description):
        comments.append(description)
    if "default" in fields:
        comments.append(f"default: {default_text(fields)}")
    return text + (f" // {' '.join(comments)}" if comments else "")


def _object(schema: dict[str, Any], indent: str) -> str:
    description = schema.get("description")
    out = f"{indent}// {description}\n" if isinstance(description, str) else ""
    out += "{\n"
    properties = schema.get("properties")
    if isinstance(properties, dict):
        listed = schema.get("required")
        required = {r for r in listed if isinstance(r, str)} if isinstance(listed, list) else set()
        for key, value in properties.items():
            out += _property(key, value, key in required, indent)
    return out + f"{indent}}}"


def _property(key: str, value: Any, required: bool, indent: str) -> str:
    fields = value if isinstance(value, dict) else {}
    out = ""
    if isinstance(title := fields.get("title"), str):
        out += f"{indent}// {title}\n{indent}//\n"
    description = fields.get("description")
    if "oneOf" not in fields and isinstance(description, str):
        out += f"{indent}// {description}\n"
    examples = fields.get("examples")
    if isinstance(examples, list) and examples:
        out += f"{indent}// Examples:\n"
        out += "".join(f'{indent}// - "{e}"\n' for e in examples if isinstance(e, str))
    name = key if required else f"{key}?"
    if isinstance(variants := fields.get("oneOf"), list):
        return out + _property_union(fields, variants, name, indent)
    out += f"{indent}{name}: {_nullable(value, ts_type(value, indent + _NESTED))},"
    if "oneOf" not in fields and "default" in fields:
        out += f" // default: {_as_written(fields)}"
    return out + "\n"


def _property_union(fields: dict[str, Any], variants: list[Any], name: str, indent: str) -> str:
    # The property's description goes above it, unless the first variant says the same; that
    # variant then repeats none, the others only a different one.
    description = fields.get("description")
    description = description if isinstance(description, str) else None
    first = variants[0] if variants and isinstance(variants[0], dict) else {}
    above = description is not None and first.get("description") != description
    out = f"{indent}// {description}\n" if above else ""
    if "default" in fields:
        out += f"{indent}// default: {_as_written(fields)}\n"
    out += f"{indent}{name}:\n"
    for i, variant in enumerate(variants):
        skip = True if i == 0 and above else description
        out += f"{indent} | {_variant(variant, indent, _as_written, skip)}\n"
    return out + f"{indent},\n"


def _nullable(schema: Any, text: str) -> str:
    # A substring test, as in openai-harmony: "nullable" in a type name counts as null.
    if isinstance(schema, dict) and schema.get("nullable") is True and "null" not in text:
        return f"{text} | null"
    return text


def _is_enum(fields: dict[str, Any]) -> bool:
    values = fields.get("enum")
    return isinstance(values, list) and bool(values)


def _as_written(fields: dict[str, Any]) -> str:
    """A property's default: a string in quotes (bare for an enum), else JSON."""
    value = fields["default"]
    if isinstance(value, str):
        return value if _is_enum(fields) else f'"{value}"'
    return json_text(value)


def _as_json(fields: dict[str, Any]) -> str:
    """A top-level variant's default: a string in quotes unless an enum's (then JSON)."""
    value = fields["default"]
    if isinstance(value, str) and not _is_enum(fields):
        return f'"{value}"'
    return json_text(value)


def json_text(value: Any) -> str:
    """Compact JSON as serde_json writes it (Rust's ryu for floats: ``1e-7``, ``0.00001``)."""
    if isinstance(value, dict):
        return "{" + ",".join(f"{json_text(str(k))}:{json_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(json_text(v) for v in value) + "]"
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, int) and -(2**63) <= value < 2**64:
        return str(value)
    if isinstance(value, int | float):
        return _float_text(float(value))
    return json.dumps(str(value), ensure_ascii=False)


def _float_text(value: float) -> str:
    if not math.isfinite(value):
        return "null"  # serde_json keeps no NaN or infinity in a JSON value
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0:
        return sign + "0.0"
    # Python's repr and ryu both choose the shortest digits that read back the same.
    _, digit_tuple, exponent = Decimal(repr(abs(value))).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0")
    exponent = int(exponent) + len(digit_tuple) - len(digits)
    size = len(digits)
    point = size + exponent  # value = 0.DIGITS x 10^point
    if exponent >= 0 and point <= 16:
        text = digits + "0" * exponent + ".0"
    elif 0 < point <= 16:
        text = f"{digits[:point]}.{digits[point:]}"
    elif -5 < point <= 0:
        text = "0." + "0" * -point + digits
    elif size == 1:
        text = f"{digits}e{point - 1}"
    else:
        text = f"{digits[0]}.{digits[1:]}e{point - 1}"
    return sign + text


def lines(text: str) -> list[str]:
    """Split like Rust's ``str::lines`` (``\\n`` or ``\\r\\n``; no empty last line), which
    openai-harmony applies to tool descriptions; ``str.splitlines`` also splits on other
    characters (``\\r``, ``\\x0b``, ``\\u2028``...)."""
    pieces = text.split("\n")
    out = [piece.removesuffix("\r") for piece in pieces[:-1]]
    return [*out, pieces[-1]] if pieces[-1] else out
