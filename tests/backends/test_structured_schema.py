"""Schemas the engine holds answers to, read without a model: what is refused (and named),
what is rewritten only tighter, integer bounds and patterns as the grammar writes them, and the
answer checked against its schema afterwards."""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest

from gptoss_local.backends.base import ResponseFormat
from gptoss_local.backends.llamacpp.structured.gbnf import convert, int_range
from gptoss_local.schemas import (
    AnswerError,
    SchemaError,
    check_answer,
    check_arguments,
    check_schema,
)
from gptoss_local.schemas.keywords import prepare
from gptoss_local.schemas.pattern import translate_pattern

OBJ = {"type": "object"}

REFUSED = [
    ({"type": "object", "properties": {"tags": {"type": "object",
      "patternProperties": {"^x": {}}}}}, "patternProperties", "$.properties.tags"),
    ({"type": "array", "items": {"type": "integer"}, "uniqueItems": True}, "uniqueItems", "$"),
    ({"type": "number", "minimum": 0}, "minimum", "$"),
    ({"type": "integer", "multipleOf": 5}, "multipleOf", "$"),
    ({"not": {"type": "string"}}, "not", "$"),
    ({"type": "object", "properties": {"a": {"if": {"type": "string"}}}}, "if", "$.properties.a"),
    ({"type": "string", "format": "email"}, "format", "$"),
    ({"type": "string", "pattern": "^(?=a)b$"}, "pattern", "$"),
    ({"type": "string", "pattern": "^a\\\\b$"}, "pattern", "$"),
    ({"type": "string", "pattern": "^a\\bb$"}, "pattern", "$"),
    ({"type": "string", "pattern": "^(a)\\1$"}, "pattern", "$"),
    ({"type": "string", "pattern": "^a\"b$"}, "pattern", "$"),
    ({"type": "object", "properties": {"x": OBJ}, "required": ["y"]}, "required", "$"),
    ({"anyOf": [OBJ], "properties": {"a": OBJ}}, "properties", "$"),
    ({"$ref": "https://example.com/s.json"}, "$ref", "$"),
    ({"$ref": "#/$defs/missing"}, "$ref", "$"),
    ({"type": "array", "prefixItems": [OBJ], "items": OBJ}, "items", "$"),
    ({"type": "array", "contains": {"type": "integer"}}, "contains", "$"),
    ({"type": "object", "properties": {"a": OBJ}, "minProperties": 2}, "minProperties", "$"),
    ({"type": "object", "dependentRequired": {"a": ["b"]}}, "dependentRequired", "$"),
    ({"type": "object", "properties": {"a": False}}, "false", "$.properties.a"),
    ({"type": "string", "pattern": "^x$", "maxLength": 3}, "maxLength", "$"),
    ({"type": "string", "format": "date", "minLength": 3}, "minLength", "$"),
    ({"type": "integer", "minimum": 5, "maximum": 3}, "maximum", "$"),
    ({"type": "string", "minLength": 5000}, "minLength", "$"),
    ({"enum": [1, 2], "type": "string"}, "enum", "$"),
    ({"type": "object", "additionalProperties": {"type": "integer"}, "propertyNames":
      {"maxLength": 3}}, "propertyNames", "$"),
    ({"$defs": {"a b": {"uniqueItems": True, "type": "array"}}, "type": "object",
      "properties": {"x": {"$ref": "#/$defs/a b"}}}, "uniqueItems", '$.$defs["a b"]'),
    ({"type": "integer", "minimum": True}, "minimum", "$"),
    ({"allOf": [{"type": "object", "properties": {"a": OBJ}}, {"type": "string"}]}, "allOf",
     "$.allOf[1]"),
]  # fmt: skip


@pytest.mark.parametrize(("schema", "keyword", "path"), REFUSED)
def test_a_keyword_the_grammar_cannot_hold_is_refused_by_name(
    schema: dict[str, Any], keyword: str, path: str
) -> None:
    with pytest.raises(SchemaError) as refused:
        check_schema(schema)
    assert refused.value.keyword == keyword
    assert refused.value.path == path
    assert str(refused.value).startswith(f"{keyword!r} at {path} is not supported")
    assert isinstance(refused.value, ValueError)


HELD = [
    {"type": "object", "title": "T", "description": "d", "$schema":
     "https://json-schema.org/draft/2020-12/schema", "examples": [{}], "x-unknown": 1,
     "properties": {"a": {"type": "string", "default": "q", "$comment": "c"}}},
    {"type": "string", "minimum": 3},  # another type's keyword: no effect, dropped
    {"type": "array", "uniqueItems": True, "maxItems": 1},  # one item is always unique
    {"type": "object", "properties": {"a": OBJ}, "required": ["a"], "minProperties": 1,
     "maxProperties": 1, "additionalProperties": False, "unevaluatedProperties": False},
    {"type": "integer", "multipleOf": 1},
    {"allOf": [{"$ref": "#/$defs/E"}], "$defs": {"E": {"enum": ["p", "q"]}}},
    {"type": ["string", "null"], "maxLength": 3},
    {"type": "string", "pattern": "^(?:[a-z]+|\\d{2,4})(?<tail>-[A-F]{1,3})?$"},
]  # fmt: skip


@pytest.mark.parametrize("schema", HELD)
def test_annotations_and_keywords_without_effect_pass(schema: dict[str, Any]) -> None:
    check_schema(schema)
    convert(json.dumps(schema), "r")


def test_what_is_rewritten_is_only_tighter() -> None:
    long = prepare({"type": "string", "maxLength": 100_000})
    assert long == {"type": "string", "minLength": 0, "maxLength": 2000}  # llama.cpp's most
    merged = prepare({"allOf": [{"properties": {"a": {"type": "boolean"}}},
                                {"properties": {"b": {"const": 1}}}]})  # fmt: skip
    assert merged["required"] == ["a", "b"] and merged["additionalProperties"] is False
    split = prepare({"type": ["string", "null"], "maxLength": 3})
    assert split == {"anyOf": [{"type": "string", "minLength": 0, "maxLength": 3},
                               {"type": "null"}]}  # fmt: skip
    assert prepare({"enum": [1, "a", None], "type": ["integer", "null"]}) == {"enum": [1, None]}
    assert prepare({"type": "integer", "exclusiveMinimum": 0.5, "maximum": 9.9}) == {
        "type": "integer", "minimum": 1, "maximum": 9}  # fmt: skip
    closed = prepare({"type": "object", "properties": {"a": OBJ}})
    assert closed["additionalProperties"] is False  # no other keys, rather than any


def test_refs_get_names_of_their_own() -> None:
    schema = {"$defs": {"Node": {"type": "object", "properties": {"next": {"anyOf": [
        {"$ref": "#/$defs/Node"}, {"type": "null"}]}}, "required": ["next"]}},
        "$ref": "#/$defs/Node"}  # fmt: skip
    prepared = prepare(schema, "t3d")
    assert prepared["$ref"] == "#/$defs/t3d0" and list(prepared["$defs"]) == ["t3d0"]
    root, rules = convert(json.dumps(schema), "t3")
    assert root == "t3" and "t3d0" in dict(rules)


def as_regex(gbnf: str) -> str:
    """The small GBNF `int_range` writes (literals, classes, groups, counts) as a regex."""
    return re.sub(r'"([^"]*)"', lambda m: re.escape(m[1]), gbnf).replace(" ", "")


def test_integer_ranges_are_exact() -> None:
    rng = random.Random(24)
    for _ in range(2000):
        low = rng.randint(-2500, 2500)
        high = low + rng.choice([0, 1, 9, 10, 99, 100, 999, 4000])
        pattern = re.compile(as_regex(int_range(low, high)))
        for n in range(low - 25, high + 26):
            assert bool(pattern.fullmatch(str(n))) == (low <= n <= high), (low, high, n)
        assert not pattern.fullmatch("-0") and not pattern.fullmatch("01")


PATTERNS = [
    ("^[A-Z]{3}-\\d{2,4}$", "ABC-123"),
    ("ab+c", "xabbbcy"),
    ("^x(y|z)*$", "xyzzy"),
    ("^[^0-9]{1,3}\\.$", "ab."),
    ("\\w+@\\w+", "a@b"),
    ("^(?:a|bc){2}$", "bca"),
    ("^[a-f]?[0-9]$", "a0"),
    ("^\\u00e9+\\x41$", "ééA"),
    ("^[-+]?\\d*\\.?\\d+$", "-1.5"),
    ("q$", "zq"),
]
ALPHABET = 'abcxyzqAZ09.-+@é "\\|\n'


@pytest.mark.parametrize(("pattern", "example"), PATTERNS)
def test_a_pattern_is_rewritten_to_the_same_language_less_what_json_escapes(
    pattern: str, example: str
) -> None:
    """The rewrite is anchored and matches exactly the strings the pattern finds (JSON Schema
    searches, with ECMA-262's ASCII classes), among strings without a quote, a backslash, a |
    or a control character; it never matches one with them."""
    # The grammar's "." is the converter's dot rule, which leaves the barred characters out.
    rewritten = re.compile(translate_pattern(pattern, "$").replace(".", r'[^"\\|\x00-\x1f]'))
    original = re.compile(pattern, re.ASCII)
    assert rewritten.fullmatch(example)
    rng = random.Random(pattern)
    for _ in range(20_000):
        text = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 7)))
        plain = not re.search(r'["\\|\x00-\x1f]', text)
        assert bool(rewritten.fullmatch(text)) == (plain and bool(original.search(text))), text


def test_an_answer_is_checked_with_the_path_that_fails() -> None:
    schema = {
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"price": {"type": "integer", "minimum": 0}},
                },
            }
        },
    }
    fmt = ResponseFormat(schema)  # fmt: skip
    assert check_answer('{"items": [{"price": 3}]}', fmt) == {"items": [{"price": 3}]}
    with pytest.raises(AnswerError, match=r"\$\.items\[1\]\.price: -2 is less than"):
        check_answer('{"items": [{"price": 3}, {"price": -2}]}', fmt)
    with pytest.raises(AnswerError, match="not JSON"):
        check_answer('{"items": [', fmt)
    with pytest.raises(AnswerError, match="empty"):
        check_answer("  ", fmt)
    with pytest.raises(AnswerError, match="not JSON"):
        check_answer('{"a": "line\nbreak"}', ResponseFormat(None))  # raw control character
    with pytest.raises(AnswerError, match="not an object"):
        check_answer("[1]", ResponseFormat(None))
    with pytest.raises(AnswerError, match="is not a 'date'"):
        check_answer('"2023-02-30"', ResponseFormat({"type": "string", "format": "date"}))
    assert check_arguments("{}", None) == {}
    with pytest.raises(AnswerError, match="arguments"):
        check_arguments('{"x": 1}', None)
