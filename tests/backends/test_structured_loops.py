"""Schemas whose refs loop with no way out (no finite value matches them), or come back to
themselves before a character is written (llama.cpp refuses such a grammar): refused by name
before anything runs, while recursion that can end (a tree, a linked list) is held as before,
by the real engine on the tiny model."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import llama_cpp.llama_cpp as bindings
import pytest
from engine_helpers import chat, open_tiny

from gptoss_local.backends.base import ReplyRequest, ResponseFormat, UnsupportedRequest
from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
from gptoss_local.backends.llamacpp.structured.harmony import _answer_gbnf
from gptoss_local.schemas import SchemaError, SchemaLoop, check_schema

SELF = {"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}
RANDOM_SCHEMAS = 600
TREE = {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#"}}}}


def obj(properties: dict[str, Any], *required: str) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required)}


LOOPS = [
    (SELF, "#/$defs/a refers only to itself (at $.$defs.a): no finite value matches"),
    ({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"},
     "#/$defs/a -> #/$defs/b -> #/$defs/a loops with no way out (at $.$defs.a)"),
    ({"$ref": "#"}, "# refers only to itself (at $)"),
    (obj({"me": {"$ref": "#"}}, "me"), "# needs itself with no way out (at $)"),
    (obj({"kids": {"type": "array", "items": {"$ref": "#"}, "minItems": 1}}, "kids"),
     "# needs itself with no way out"),
    ({"$defs": {"a": {"allOf": [{"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"},
     "#/$defs/a refers only to itself"),
    ({"$defs": {"a": {"oneOf": [{"$ref": "#/$defs/b"}, obj({"x": {"$ref": "#/$defs/a"}}, "x")]},
                "b": obj({"n": {"$ref": "#/$defs/a"}}, "n")},
      **obj({"v": {"$ref": "#/$defs/a"}})},  # optional, but once begun it could never end
     "#/$defs/a -> #/$defs/b -> #/$defs/a loops with no way out"),
    ({"type": "array", "prefixItems": [{"$ref": "#"}], "items": False},
     "# needs itself with no way out"),
    ({"anyOf": [{"$ref": "#"}, {"type": "string"}]},
     "# can be itself before any value is written (at $): the grammar cannot hold that"),
    ({"$defs": {"a": {"anyOf": [{"$ref": "#/$defs/b"}, {"type": "null"}]},
                "b": {"anyOf": [{"$ref": "#/$defs/a"}, {"type": "integer"}]}}, "$ref": "#/$defs/a"},
     "#/$defs/a -> #/$defs/b -> #/$defs/a comes back before any value is written"),
]  # fmt: skip
ENDING = {
    "tree": TREE,
    "tree of defs": {"$defs": {"node": obj({"kids": {"type": "array", "minItems": 1,
                                                       "items": {"$ref": "#/$defs/leaf"}}})},
                     "leaf": {"anyOf": [{"$ref": "#/$defs/node"}, {"type": "null"}]}},
    "list": {"$defs": {"n": obj({"next": {"anyOf": [{"$ref": "#/$defs/n"}, {"type": "null"}]}},
                                "next")}, "$ref": "#/$defs/n"},
    "optional self": obj({"me": {"$ref": "#"}, "v": {"type": "integer"}}, "v"),
}  # fmt: skip


@pytest.mark.parametrize(("schema", "words"), LOOPS)
def test_a_loop_with_no_way_out_is_refused_by_name(schema: dict[str, Any], words: str) -> None:
    with pytest.raises(SchemaLoop) as refused:
        check_schema(schema)
    assert words in str(refused.value)
    assert refused.value.keyword == "$ref" and refused.value.loop[0] in words


@pytest.mark.parametrize("name", list(ENDING))
def test_recursion_that_can_end_is_held(name: str) -> None:
    check_schema(ENDING[name])


@pytest.fixture(scope="module")
def backend(tiny_gguf: Path) -> Iterator[LlamaCppBackend]:
    with open_tiny(tiny_gguf) as opened:
        yield opened


def accepted_by_llama_cpp(backend: LlamaCppBackend, gbnf: str) -> bool:
    """Whether llama.cpp's own grammar reader takes `gbnf` (the sampler is freed again)."""
    sampler = bindings.llama_sampler_init_grammar(backend._native.vocab, gbnf.encode(), b"root")
    if sampler:
        bindings.llama_sampler_free(sampler)
    return bool(sampler)


@pytest.mark.parametrize("name", list(ENDING))
def test_llama_cpp_takes_the_grammar_of_recursion_that_can_end(
    backend: LlamaCppBackend, name: str
) -> None:
    assert accepted_by_llama_cpp(backend, _answer_gbnf(json.dumps(ENDING[name])))


def test_the_engine_refuses_a_loop_before_the_reply(backend: LlamaCppBackend) -> None:
    """Before, the grammar reached llama.cpp, which refused it once the reply began: a
    BackendError (a 500 in serve). Now it is the request's fault, named, at once."""
    asked = ReplyRequest(chat("hi"), response_format=ResponseFormat(SELF))
    with pytest.raises(UnsupportedRequest) as refused:
        backend.stream(asked)
    assert refused.value.field == "response_format"
    assert "#/$defs/a refers only to itself" in str(refused.value)
    assert "way out" in (refused.value.hint or "")


def random_schema(rng: random.Random, defs: list[str], depth: int = 0) -> Any:
    """A random schema of the keywords the grammar holds, refs to `defs` among them."""
    roll = rng.random() if depth < 4 else rng.random() * 0.5
    if roll < 0.15 and defs:
        return {"$ref": f"#/$defs/{rng.choice(defs)}"}
    if roll < 0.2:
        return {"$ref": "#"}
    if roll < 0.3:
        return rng.choice(
            [
                {"type": "string", "maxLength": 3},
                {"enum": [1, "a", None]},
                {"type": "integer", "minimum": -5, "maximum": 40},
                {"type": "string", "pattern": "^[a-c]{1,3}$"},
                {"type": "boolean"},
                {"type": "string", "format": "date"},
                {"type": ["string", "null"]},
            ]
        )
    if roll < 0.5:
        return {"type": "string"}
    if roll < 0.65:
        kind = rng.choice(["anyOf", "oneOf"])
        return {kind: [random_schema(rng, defs, depth + 1) for _ in range(rng.randint(1, 3))]}
    if roll < 0.8:
        items: dict[str, Any] = {"type": "array", "items": random_schema(rng, defs, depth + 1)}
        if rng.random() < 0.5:
            items["minItems"] = rng.randint(0, 2)
        return items
    names = rng.sample(["a", "b", "c", "d"], rng.randint(0, 3))
    properties = {n: random_schema(rng, defs, depth + 1) for n in names}
    required = [n for n in names if rng.random() < 0.5]
    return {"type": "object", "properties": properties, "required": required}


def test_every_random_schema_is_refused_by_name_or_its_grammar_taken(
    backend: LlamaCppBackend,
) -> None:
    """Whatever shape the refs take, `check_schema` refuses it or llama.cpp takes its
    grammar: a refusal is never left to llama.cpp once the request has waited."""
    rng = random.Random(36)
    refused = taken = 0
    for _ in range(RANDOM_SCHEMAS):
        names = rng.sample(["x", "y", "z"], rng.randint(0, 3))
        defs = {n: random_schema(rng, names) for n in names}
        schema = {**random_schema(rng, names), **({"$defs": defs} if defs else {})}
        try:
            check_schema(schema)
        except SchemaError:
            refused += 1
            continue
        assert accepted_by_llama_cpp(backend, _answer_gbnf(json.dumps(schema))), schema
        taken += 1
    assert refused and taken  # both kinds were met
