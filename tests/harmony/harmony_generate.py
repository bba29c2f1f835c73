"""Seeded random tool schemas and conversations for the comparisons with openai-harmony."""

from __future__ import annotations

import datetime as dt
import json
import random
from typing import Any

from gptoss_local.conversation import Message, Tool, ToolCallRecord

TEXT_PIECES = [
    "Hello", "word", " ", "  ", "\n", "\n\n", "\t", "é", "🙂", "日本語", "Ünïcode", '"q"', "'",
    "{", "}", "[1, 2]", "a < b", "x | y", "<>", "assistantfinal", "\r\n", "to=x", "//", "\\",
]  # fmt: skip
MARKERS = ["<|end|>", "<|start|>", "<|message|>", "<|channel|>", "<|foo|>", "a <| b", "<|"]
KEYS = ["a", "b", "name", "count", "mode", "with_underscore", "camelCase", "x1", "ключ", "a-b"]
DEFAULTS: list[Any] = [
    "text", 'say "hi"', "", "two\nlines", 0, -7, 3.25, 1e-7, 1e21, 2.0, True, False, None,
    [1, "a"], {"k": [None]}, [], {},
]  # fmt: skip


def text(rng: random.Random, markers: bool = True, most: int = 8) -> str:
    """Random text; with `markers`, sometimes control-token look-alikes."""
    pool = TEXT_PIECES + (MARKERS if markers else [])
    return "".join(rng.choice(pool) for _ in range(rng.randint(0, most)))


def schema(rng: random.Random, depth: int = 0) -> Any:
    """A random schema using the features openai-harmony's renderer reads (and some it does
    not): types, type lists, enums, arrays, objects, oneOf, anyOf, and comments."""
    kinds = ["string", "number", "integer", "boolean", "enum", "types", "null", "odd"]
    kinds += ["array", "object", "one_of", "any_of"] if depth < 3 else []
    kind = rng.choice(kinds)
    if kind == "odd":
        return rng.choice([True, {}, {"type": "date"}, {"enum": ["u", 2]}, {"$ref": "#/x"}])
    out: dict[str, Any]
    if kind == "enum":
        values = rng.sample(["a", "b c", "<|end|>", 'q"', 1, 2.5, None, True], rng.randint(0, 4))
        out = {"enum": values}
        if rng.random() < 0.7:
            out["type"] = rng.choice(["string", "string", "integer", "number"])
    elif kind == "types":
        names = ["string", "integer", "number", "boolean", "null", "object", "array", 3]
        out = {"type": rng.sample(names, rng.randint(0, 3))}
    elif kind == "array":
        out = {"type": "array"}
        if rng.random() < 0.8:
            out["items"] = schema(rng, depth + 1)
    elif kind == "object":
        out = object_schema(rng, depth + 1)
    elif kind in ("one_of", "any_of"):
        key = "oneOf" if kind == "one_of" else "anyOf"
        out = {key: [schema(rng, depth + 1) for _ in range(rng.randint(0, 3))]}
        if rng.random() < 0.3:
            out["type"] = rng.choice(["string", "object"])
    else:
        out = {"type": kind}
    return _decorate(rng, out)


def object_schema(rng: random.Random, depth: int = 0) -> dict[str, Any]:
    """A random object schema (sometimes without properties, or with odd `required`)."""
    out: dict[str, Any] = {"type": "object"}
    if rng.random() < 0.85:
        keys = rng.sample(KEYS, rng.randint(0, 4))
        out["properties"] = {key: schema(rng, depth) for key in keys}
        if keys and rng.random() < 0.7:
            out["required"] = rng.sample(keys, rng.randint(0, len(keys)))
    return out


def _decorate(rng: random.Random, out: dict[str, Any]) -> dict[str, Any]:
    if rng.random() < 0.4:
        out["description"] = text(rng, most=5) if rng.random() < 0.8 else 5
    if rng.random() < 0.1:
        out["title"] = text(rng, markers=False, most=3)
    if rng.random() < 0.1:
        out["examples"] = rng.sample(["x", 'y "z"', 3, None], rng.randint(0, 3))
    if rng.random() < 0.25:
        out["default"] = rng.choice(DEFAULTS)
    if rng.random() < 0.15:
        out["nullable"] = rng.choice([True, True, False, "yes"])
    return out


def tools(rng: random.Random, markers: bool = True) -> list[Tool]:
    """Zero to three tools with distinct names, random descriptions and schemas."""
    names = rng.sample(["lookup", "get_weather", "run_query", "f", "Tool_2", "_x"], 3)
    out = []
    for name in names[: rng.choice([0, 0, 1, 1, 2, 3])]:
        params: dict[str, Any] | None = None
        if rng.random() < 0.8:
            params = object_schema(rng) if rng.random() < 0.8 else schema(rng)
            params = params if isinstance(params, dict) else None
        description = rng.choice(["", "Does it.", "Line one.\nLine two.\r\n", text(rng, markers)])
        out.append(Tool(name, description, params))
    return out


def _arguments(rng: random.Random) -> dict[str, Any] | str:
    if rng.random() < 0.3:
        return rng.choice(["{}", '{"raw": 1}', "not json", ""])
    return {rng.choice(KEYS): rng.choice(DEFAULTS) for _ in range(rng.randint(0, 3))}


def _tool_turn(
    rng: random.Random, names: list[str], markers: bool, waiting: list[str]
) -> list[Message]:
    """A reply with calls and their results; `waiting` holds the calls not yet answered."""
    calls = tuple(
        ToolCallRecord(rng.choice(names), _arguments(rng)) for _ in range(rng.randint(1, 2))
    )
    preamble = text(rng, markers) if rng.random() < 0.3 else ""
    reply = Message("assistant", preamble, reasoning=text(rng, markers), tool_calls=calls)
    waiting += [call.name for call in calls]
    results = []
    for i, call in enumerate(calls):
        if rng.random() < 0.9:  # an unanswered call now and then
            # Unnamed only where nothing older waits, so that it can only answer this call.
            alone = waiting == [c.name for c in calls[i:]]
            named = None if alone and rng.random() < 0.5 else call.name
            waiting.remove(call.name)
            results.append(Message("tool", text(rng, markers), tool_name=named))
    return [reply, *results]


def conversation(rng: random.Random, markers: bool = True) -> tuple[list[Message], dict]:
    """A random history with the options of `render_prompt`."""
    options: dict[str, Any] = {
        "effort": rng.choice(["low", "medium", "high"]),
        "instructions": rng.choice([None, "", "Be brief.", text(rng, markers)]),
        "tools": tools(rng, markers),
        "current_date": dt.date(2024, 1, 1) + dt.timedelta(days=rng.randint(0, 900)),
        "knowledge_cutoff": rng.choice(["2024-06", "2025-01"]),
        "keep_past_tool_calls": rng.random() < 0.5,
    }
    names = [t.name for t in options["tools"]] or ["lookup"]
    messages: list[Message] = []
    waiting: list[str] = []
    for _ in range(rng.randint(0, 3)):
        messages.append(Message("user", text(rng, markers)))
        for _ in range(rng.choice([0, 0, 1, 2])):
            messages += _tool_turn(rng, names, markers, waiting)
        if rng.random() < 0.9:
            messages.append(Message("assistant", text(rng, markers), reasoning=text(rng, markers)))
    messages.append(Message("user", text(rng, markers)))
    if rng.random() < 0.35:  # a chain of calls still running
        for _ in range(rng.randint(1, 2)):
            messages += _tool_turn(rng, names, markers, waiting)
    return messages, options


def describe(messages: list[Message], options: dict) -> str:
    """A short text of one case, for assertion messages."""
    shown = {k: v for k, v in options.items() if k != "tools"}
    shown["tools"] = [(t.name, t.description, t.parameters) for t in options["tools"]]
    return json.dumps({"options": shown, "messages": [repr(m) for m in messages]}, default=str)
