"""JSON schemas as GBNF rules, through llama-cpp-python's own converter.

`llama_cpp.llama_grammar.SchemaConverter` is kept by llama-cpp-python;
`schemas.keywords.prepare()` hands it only schema shapes it reads exactly. Four things are done
here around it:

- a few of its rules are replaced: `space` takes a newline and indentation too (it takes one
  space: every line break a model writes would be refused and sampled again); a string may not
  hold ``<|`` raw, and a bounded string's `char` and a pattern's `.` no raw ``|``, so that no
  Harmony control token (all spelled ``<|...|>``) fits inside a JSON string; no character of a
  string may be a control character, which JSON needs escaped; `date` knows how many days each
  month has (2023-02-30 passed, and Python's date checker refuses it);
- integers held to bounds (`int_range`), which it does not read;
- bounded strings and arrays written with llama.cpp's own `{m,n}`, where it nests one group
  per optional repeat (a `maxLength` of thousands nests thousands deep);
- every schema converted under a name of its own (`r`, `t0`, ... and its refs `rd0`, ...), so
  the rules of several schemas live in one grammar.

Converting costs milliseconds; `convert()` keeps the last results by the schema's JSON text.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from gptoss_local.schemas.errors import SchemaError
from gptoss_local.schemas.keywords import prepare

ESCAPE = r'"\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})'
OVERRIDES = {
    "space": r'( " " | "\n"{1,2} [ \t]{0,20} )?',
    "char": r'[^"\\|\x00-\x1F] | ' + ESCAPE,
    "string": r'"\"" ( [^"\\<\x00-\x1F] | '
    + ESCAPE
    + r' | "<"+ ( [^"\\<|\x00-\x1F] | '
    + ESCAPE
    + r' ) )* "<"* "\"" space',
    "dot": r'[^"\\|\x00-\x1F]',
    "date": r'[1-9] [0-9]{3} "-" ( ( "0" [13578] | "1" [02] ) "-" ( "0" [1-9] | [12] [0-9] | '
    r'"3" [01] ) | ( "0" [469] | "11" ) "-" ( "0" [1-9] | [12] [0-9] | "30" ) | "02-" ( "0" '
    r'[1-9] | "1" [0-9] | "2" [0-8] ) )',
}
Rules = tuple[tuple[str, str], ...]


def convert(schema_json: str, name: str) -> tuple[str, Rules]:
    """The rules for the schema in `schema_json` (JSON text; "null": any JSON object): the name
    of its root rule, and every rule, named under `name`.

    Raises:
        SchemaError: the schema asks what the grammar cannot hold.
    """
    return _convert(schema_json, name)


@functools.lru_cache(maxsize=128)
def _convert(schema_json: str, name: str) -> tuple[str, Rules]:
    schema = json.loads(schema_json)
    prepared = prepare({"type": "object"} if schema is None else schema, f"{name}d")
    converter = _converter_class()(prop_order={}, allow_fetch=False, dotall=False,
                                   raw_pattern=False)  # fmt: skip
    # Every ref is #/$defs/KEY (keywords.prepare), KEY unique to this schema: given to the
    # converter as resolved, its resolve_refs would skip the refs inside the definitions.
    converter._refs.update({f"#/$defs/{k}": v for k, v in prepared.pop("$defs", {}).items()})
    try:
        root = converter.visit(prepared, name)
    except RecursionError:
        raise SchemaError("type", "$", "the schema nests too deeply") from None
    rules = {**converter._rules}
    rules.update({k: v for k, v in OVERRIDES.items() if k in rules})
    return root, tuple(sorted(rules.items()))


def int_range(low: int, high: int) -> str:
    """GBNF for the decimal integers from `low` to `high` (no leading zeros, no "-0")."""
    parts = []
    if low < 0:
        parts.append(f'"-" ( {_naturals(max(1, -high), -low)} )')
    if high >= 0:
        parts.append(_naturals(max(0, low), high))
    return " | ".join(parts)


def _naturals(low: int, high: int) -> str:
    spans = []
    for digits in range(len(str(low)), len(str(high)) + 1):
        first = max(low, 10 ** (digits - 1) if digits > 1 else 0)
        last = min(high, 10**digits - 1)
        if first <= last:
            spans.append(_same_length(str(first), str(last)))
    return " | ".join(spans)


def _same_length(a: str, b: str) -> str:
    """The numerals of one length from `a` to `b` (digits after the first may be 0)."""
    common = 0
    while common < len(a) and a[common] == b[common]:
        common += 1
    if common == len(a):
        return f'"{a}"'
    head = f'"{a[:common]}" ' if common else ""
    a, b = a[common:], b[common:]
    rest = len(a) - 1
    if not rest:
        return f"{head}[{a}-{b}]"
    low, high, parts, tail = int(a[0]), int(b[0]), [], None
    if a[1:] != "0" * rest:
        parts.append(f"[{a[0]}] ( {_same_length(a[1:], '9' * rest)} )")
        low += 1
    if b[1:] != "9" * rest:
        tail = f"[{b[0]}] ( {_same_length('0' * rest, b[1:])} )"
        high -= 1
    if low <= high:
        parts.append(f"[{low}-{high}] [0-9]{{{rest}}}")
    if tail:
        parts.append(tail)
    return f"{head}( {' | '.join(parts)} )"


def _times(low: int, high: int | None) -> str:
    return f"{{{low},{'' if high is None else high}}}"


@functools.cache
def _converter_class() -> Any:
    """The converter, reading the bounds it does not (imported here: it loads llama.cpp)."""
    from llama_cpp.llama_grammar import PRIMITIVE_RULES, RESERVED_NAMES, SchemaConverter

    class Converter(SchemaConverter):
        def visit(self, schema: dict[str, Any], name: str) -> str:
            kind = schema.get("type")
            rule = name + "-" if name in RESERVED_NAMES else name or "root"
            if kind == "integer" and "minimum" in schema:
                body = int_range(schema["minimum"], schema["maximum"])
                return str(self._add_rule(rule, f"( {body} ) space"))
            if kind == "string" and "minLength" in schema:
                char = self._add_primitive("char", PRIMITIVE_RULES["char"])
                times = _times(schema["minLength"], schema.get("maxLength"))
                return str(self._add_rule(rule, rf'"\"" {char}{times} "\"" space'))
            if kind == "array" and "items" in schema:
                item = self.visit(schema["items"], f"{name}-item")
                return str(self._add_rule(rule, _array(item, schema)))
            return str(super().visit(schema, name))

    return Converter


def _array(item: str, schema: dict[str, Any]) -> str:
    low, high = schema.get("minItems", 0), schema.get("maxItems")
    if high == 0:
        return '"[" space "]" space'
    more = None if high is None else high - 1
    tail = "" if more == 0 else f' ( "," space {item} ){_times(max(low - 1, 0), more)}'
    body = f"{item}{tail}"
    return f'"[" space {body if low else f"( {body} )?"} "]" space'
