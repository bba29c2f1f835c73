"""Tool schemas for every feature openai-harmony renders in its own way (issue #13, item 3)."""

from __future__ import annotations

from typing import Any

S: dict[str, Any] = {"type": "string"}
N: dict[str, Any] = {"type": "number"}
INT: dict[str, Any] = {"type": "integer"}


def obj(required: tuple[str, ...] = (), **properties: Any) -> dict[str, Any]:
    """An object schema with these properties."""
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        out["required"] = list(required)
    return out


SCHEMAS: dict[str, Any] = {
    "no_schema": None,
    "empty_properties": obj(),
    "object_without_properties": {"type": "object"},
    "empty_schema": {},
    "properties_without_type": {"properties": {"a": S}},
    "top_level_description": {**obj(("a",), a=S), "description": "All the arguments."},
    "top_level_multiline_description": {**obj(a=S), "description": "One.\nTwo."},
    "array_of_type_list": obj(ids={"type": "array", "items": {"type": ["integer", "string"]}}),
    "array_of_enum": obj(modes={"type": "array", "items": {**S, "enum": ["fast", "slow"]}}),
    "array_without_items": obj(extra={"type": "array"}),
    "array_of_true": obj(extra={"type": "array", "items": True}),
    "array_of_objects": obj(rows={"type": "array", "items": obj(("k",), k=S, v=N)}),
    "array_of_arrays": obj(grid={"type": "array", "items": {"type": "array", "items": N}}),
    "array_of_oneof": obj(xs={"type": "array", "items": {"oneOf": [S, N]}}),
    "any_of": obj(level={"anyOf": [INT, {**S, "enum": ["max"]}]}),
    "any_of_with_type": obj(level={"type": "string", "anyOf": [S, N], "description": "L"}),
    "all_of_and_ref": obj(a={"allOf": [S]}, b={"$ref": "#/$defs/x"}),
    "one_of_plain": obj(("v",), v={"oneOf": [S, N, {"type": "boolean"}]}),
    "one_of_comments": obj(
        v={
            "description": "The value.",
            "oneOf": [
                {**S, "description": "As text.", "default": "x"},
                {**N, "description": "As a number.", "default": 1.5},
                {**S, "enum": ["a", "b"], "default": "a", "description": "A letter."},
                {**S, "nullable": True},
            ],
        }
    ),
    "one_of_first_variant_repeats_description": obj(
        v={
            "description": "Same.",
            "oneOf": [{**S, "description": "Same."}, {**N, "description": "Same."}, N],
        }
    ),
    "one_of_with_default_title_examples": obj(
        v={
            "title": "Value",
            "examples": ["a", 1],
            "default": "auto",
            "oneOf": [S, {**INT, "description": "Count."}],
        },
        w={"default": "b", "enum": ["b"], "oneOf": [S]},
        x={"default": [1, 2], "oneOf": [S]},
    ),
    "one_of_of_objects": obj(
        target={"oneOf": [obj(("id",), id=INT), {**obj(name=S), "description": "By name."}]}
    ),
    "one_of_not_a_list": obj(v={"oneOf": {"type": "string"}, "description": "D", "default": 1}),
    "one_of_empty": obj(v={"oneOf": [], "description": "D"}),
    "top_level_one_of": {
        "oneOf": [
            {**obj(("a",), a=S), "description": "First form."},
            {**obj(b=N), "default": {"b": 1}},
            {**S, "enum": ["x"], "default": "x"},
            {**S, "default": 'say "hi"', "nullable": True},
        ]
    },
    "integer_enum": obj(n={**INT, "enum": [1, 2, 3]}),
    "number_enum": obj(n={**N, "enum": [0.5, 1]}),
    "untyped_enum": obj(e={"enum": ["a", "b"]}),
    "mixed_enum": obj(e={**S, "enum": ["a", 1, None, "b"]}),
    "enum_without_strings": obj(e={**S, "enum": [1, 2]}),
    "empty_enum_default": obj(e={**S, "enum": [], "default": "z"}),
    "nested_descriptions": obj(
        ("outer",),
        outer={
            **obj(("inner",), inner={**obj(x=S), "description": "Inner."}, y=INT),
            "description": "Outer.",
        },
    ),
    "defaults": obj(
        a={"type": "array", "items": N, "default": [1, 2.5, "x"]},
        o={"type": "object", "default": {"k": [True, None], "é": "ü"}},
        n={**N, "default": None},
        b={"type": "boolean", "default": True},
        i={**INT, "default": -3},
        f={**N, "default": 100.0},
        tiny={**N, "default": 1e-7},
        small={**N, "default": 0.00001},
        huge={**N, "default": 1e21},
        big={**N, "default": 123456789012345678.0},
        neg={**N, "default": -0.0},
        long={**INT, "default": 2**70},
    ),
    "string_defaults": obj(
        q={**S, "default": 'say "hi"'},
        nl={**S, "default": "a\nb"},
        bs={**S, "default": "C:\\temp"},
        e={**S, "enum": ["a b", "c"], "default": "a b"},
        empty={**S, "default": ""},
    ),
    "multiline_descriptions": obj(
        a={**S, "description": "First line.\nSecond line."},
        b={**obj(c=S), "description": "Object\nover lines."},
        c={**S, "description": ""},
    ),
    "title_and_examples": obj(
        a={**S, "title": "The A", "description": "A.", "examples": ["x", "y"]},
        b={**N, "examples": [1, 2]},
        c={**S, "examples": []},
        d={**S, "title": 5, "description": 6},
    ),
    "nullable": obj(
        a={**S, "nullable": True},
        b={**S, "enum": ["null", "x"], "nullable": True},
        c={"type": ["string", "null"], "nullable": True},
        d={**S, "nullable": "yes"},
        e={**obj(x=S), "nullable": True},
    ),
    "type_lists": obj(
        a={"type": ["integer", "null"]},
        b={"type": ["object", "array", "boolean"]},
        c={"type": [1, 2]},
        d={"type": []},
    ),
    "odd_types": obj(a={"type": "null"}, b={"type": "date"}, c={"type": 3}, d=True, e=None),
    "required_odd": {**obj(a=S, b=S), "required": ["a", 1, "c"]},
    "required_not_a_list": {**obj(a=S), "required": "a"},
    "unicode_and_markers": obj(
        ("ключ",),
        ключ={**S, "description": "Ünïcode ✓ <|end|> and <|foo|>", "enum": ["<|start|>", "é"]},
    ),
}

DESCRIPTIONS: dict[str, str] = {
    "empty": "",
    "one_line": "Gets things.",
    "crlf": "First.\r\nSecond.\r\n",
    "blank_lines": "A.\n\nB.\n",
    "bare_cr": "A.\rB.",
    "other_breaks": "A.\x0bB.\x0cC.\u2028D.\x1cE.",
    "trailing_cr": "A.\r",
    "only_newline": "\n",
}
