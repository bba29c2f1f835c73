"""Replies held to a response format on the tiny real model: the answer is JSON its schema
accepts, for schemas of every kind the grammar holds, while the reasoning before it runs free.

The random model almost never writes a final message's header itself, so the tests steer it
there with a grammar of their own (`LlamaOptions.grammar`, held beside the engine's): it writes
an analysis message, then the final header, and then leaves every token to the model (`.*`).
What the answer is made of is the engine's grammar alone.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from engine_helpers import chat, ran, text_of

from gptoss_local.backends.base import (
    GenerationSettings,
    Reply,
    ReplyRequest,
    ResponseFormat,
    UnsupportedRequest,
)
from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
from gptoss_local.backends.llamacpp.options import LlamaOptions
from gptoss_local.conversation import Tool
from gptoss_local.events import AnswerDelta, ReasoningDelta, ToolCall
from gptoss_local.schemas import SchemaError, check_answer

THINKING = 'The user wants JSON. Unclosed: {[( "quote\\ <tag> | not JSON at all'
STEER = (
    'root ::= <|channel|> "analysis" <|message|> "' + THINKING.replace("\\", "\\\\")
    .replace('"', '\\"') + '" <|end|> <|start|> "assistant" <|channel|> "final" '
    "<|message|> .*"
)  # fmt: skip
SEEDS = (1, 2, 3)
INT = {"type": "integer", "minimum": 0, "maximum": 99}


def short(n: int) -> dict[str, Any]:
    return {"type": "string", "maxLength": n}


def obj(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {"type": "object", "properties": properties,
            "required": list(properties) if required is None else required,
            "additionalProperties": False}  # fmt: skip


POINT = obj({"x": INT, "y": INT})
SCHEMAS: dict[str, dict[str, Any] | None] = {
    "flat object": obj({"name": short(8), "ok": {"type": "boolean"}}),
    "optional fields": obj({"a": {"type": "integer"}, "b": short(5), "c": {"type": "null"}},
                           ["a"]),
    "nested objects": obj({"user": obj({"id": {"type": "integer", "minimum": 1,
                                               "maximum": 999}, "name": short(6)}),
                           "meta": obj({"flags": {"type": "array", "items": {"type":
                                        "boolean"}, "maxItems": 3}})}),
    "array min and max": {"type": "array", "items": {"type": "integer", "minimum": 0,
                                                     "maximum": 9},
                          "minItems": 2, "maxItems": 4},
    "string enum": {"enum": ["red", "green", "blue"]},
    "mixed enum": {"enum": [1, "two", None, True, {"x": [1]}]},
    "const": obj({"kind": {"const": "point"}, "x": {"type": "integer"}}),
    "integer bounds": {"type": "integer", "minimum": -50, "maximum": 50},
    "exclusive bounds": {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 1000},
    "number": {"type": "number"},
    "date": {"type": "string", "format": "date"},
    "date-time": {"type": "string", "format": "date-time"},
    "time": {"type": "string", "format": "time"},
    "uuid": {"type": "string", "format": "uuid"},
    "pattern": {"type": "string", "pattern": "^[A-Z]{3}-\\d{2,4}$"},
    "anyOf": {"anyOf": [INT, short(4), {"type": "null"}]},
    "refs": {"$defs": {"pt": POINT}, **obj({"from": {"$ref": "#/$defs/pt"},
                                            "to": {"$ref": "#/$defs/pt"}})},
    "recursive ref": {"$defs": {"n": obj({"v": INT, "next": {"anyOf": [
        {"$ref": "#/$defs/n"}, {"type": "null"}]}})}, "$ref": "#/$defs/n"},
    "type list": obj({"note": {"type": ["string", "null"], "maxLength": 6}}),
    "tuple": {"type": "array", "prefixItems": [{"type": "boolean"}, {"enum": ["x", "y"]},
                                               INT], "items": False},
    "allOf": {"allOf": [{"type": "object", "properties": {"a": {"type": "boolean"}}},
                        {"properties": {"b": {"const": 1}}, "required": ["b"]}]},
    "oneOf": {"oneOf": [obj({"kind": {"const": "a"}}),
                        obj({"kind": {"const": "b"}, "n": INT})]},
    "string lengths": {"type": "string", "minLength": 2, "maxLength": 5},
    "pydantic model": {"title": "Weather", "type": "object", "properties": {
        "city": {"title": "City", "type": "string", "maxLength": 10},
        "sunny": {"title": "Sunny", "type": "boolean"}}, "required": ["city", "sunny"],
        "additionalProperties": False},
    "free values": {"type": "object", "additionalProperties": {"type": "integer"}},
    "json_object": None,
}  # fmt: skip
# Schemas with strings of any length: the random model closes a string at random, so a bias
# toward the quote keeps them short.
QUOTED = {"free values", "json_object"}


def steering(backend: LlamaCppBackend, name: str) -> LlamaOptions:
    bias = ((backend.tokenize('"')[0], 8.0),) if name in QUOTED else ()
    return LlamaOptions(grammar=STEER, logit_bias=bias)


def structured(backend: LlamaCppBackend, schema: Any, seed: int, name: str = "") -> list[Any]:
    asked = ReplyRequest(chat("Give me JSON."), GenerationSettings(seed=seed, max_tokens=400),
                         response_format=ResponseFormat(schema))  # fmt: skip
    return ran(backend.stream(asked, options=steering(backend, name)))


@pytest.mark.parametrize("name", list(SCHEMAS))
def test_every_answer_is_json_the_schema_accepts_after_free_reasoning(
    backend: LlamaCppBackend, name: str
) -> None:
    schema = SCHEMAS[name]
    for seed in SEEDS:
        events = structured(backend, schema, seed, name)
        assert events.stats.stop_reason == "return", (seed, events)  # type: ignore[attr-defined]
        answer = text_of(events, AnswerDelta)
        check_answer(answer, ResponseFormat(schema))
        kinds = [type(e) for e in events if isinstance(e, (ReasoningDelta, AnswerDelta))]
        assert kinds.index(AnswerDelta) > kinds.index(ReasoningDelta)  # reasoned first
        assert AnswerDelta not in kinds[: kinds.index(AnswerDelta)]
        assert text_of(events, ReasoningDelta) == THINKING  # not held to the schema


def test_answers_differ_by_seed(backend: LlamaCppBackend) -> None:
    """The model writes the JSON, not a fixed text: the grammar only keeps it valid."""
    answers = {text_of(structured(backend, SCHEMAS["flat object"], s), AnswerDelta)
               for s in range(6)}  # fmt: skip
    assert len(answers) > 3


def test_until_the_final_header_the_reply_is_the_unheld_one(backend: LlamaCppBackend) -> None:
    """Unsteered, the random model reasons on and never reaches a final header: held to the
    format or not (the same prompt, which shows the schema, either way), it writes the same
    tokens (the end tokens a structured reply may not end with are banned in both)."""
    ban = tuple((backend.tokenize(t)[0], float("-inf")) for t in ("<|call|>", "<|endoftext|>"))
    options = LlamaOptions(logit_bias=ban)
    asked = ReplyRequest(chat("hello"), GenerationSettings(temperature=0, max_tokens=120),
                         response_format=ResponseFormat(SCHEMAS["flat object"]))  # fmt: skip

    def reply(held: bool) -> list[Any]:
        backend.cache.clear()
        constraint = backend._constraint(asked) if held else None
        assert held == (constraint is not None)
        return list(ran(Reply(backend._generate(asked, None, options, constraint))))

    free = reply(False)
    assert not text_of(free, AnswerDelta)  # it never got to an answer
    assert reply(True) == free


def test_a_call_stays_possible_when_tools_are_offered(backend: LlamaCppBackend) -> None:
    tool = Tool("lookup", "Looks a word up.", obj({"word": short(8)}))
    conversation = replace(chat("Look it up, then answer in JSON."), tools=(tool,))
    call = ('root ::= <|channel|> "commentary to=functions.lookup " <|constrain|> "json" '
            '<|message|> "{\\"word\\": \\"cat\\"}"')  # fmt: skip
    no_return = ((backend.tokenize("<|return|>")[0], float("-inf")),)
    asked = ReplyRequest(conversation, GenerationSettings(seed=1, max_tokens=100),
                         response_format=ResponseFormat(SCHEMAS["flat object"]))  # fmt: skip
    events = ran(backend.stream(asked, options=LlamaOptions(grammar=call, logit_bias=no_return)))
    assert events.stats.stop_reason == "call"  # type: ignore[attr-defined]
    assert [e for e in events if isinstance(e, ToolCall)] == [
        ToolCall("lookup", {"word": "cat"}, '{"word": "cat"}')
    ]


def test_a_schema_the_grammar_cannot_hold_is_refused_before_the_reply(
    backend: LlamaCppBackend,
) -> None:
    schema = obj({"tags": {"type": "array", "items": short(3), "uniqueItems": True}})
    asked = ReplyRequest(chat("hi"), response_format=ResponseFormat(schema))
    with pytest.raises(UnsupportedRequest) as refused:
        backend.stream(asked)  # at once, not at the first event
    assert refused.value.field == "response_format"
    cause = refused.value.__cause__
    assert isinstance(cause, SchemaError) and cause.keyword == "uniqueItems"
    assert "'uniqueItems' at $.properties.tags is not supported" in str(refused.value)
