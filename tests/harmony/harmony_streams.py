"""Seeded random completions as a gpt-oss model writes them, as token ids of o200k_harmony.

Headers and markers are encoded with special tokens; message text is encoded on its own as
ordinary tokens, so text that spells ``<|end|>`` stays ordinary tokens, as when a model
writes it out.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

TEXT_PIECES = [
    "Hello", "word", " ", "\n", "é", "🙂", "日本語", "x < y", ">", "|", "{", "}", '"q"', "to=x",
    "assistant", "final", "analysis", "commentary", "assistantfinal", "assistantanalysis",
    "assistantcommentary", "json", "functions.f", "<", "\t", "  ",
]  # fmt: skip
SPELLED = [
    "<|end|>", "<|start|>assistant<|channel|>final<|message|>", "<|return|>", "<|call|>",
    "<|constrain|>", "<|channel|>", "<|message|>", "<|foo|>", "a <| b", "<|",
]  # fmt: skip
# How models write the header of a tool call; {to} is the recipient. The first header of
# a completion has no "<|start|>assistant" (the prompt ended with it).
CALL_HEADERS = [
    "<|channel|>commentary to={to} <|constrain|>json",
    "<|channel|>commentary to={to}<|constrain|>json",
    "<|channel|>commentary to={to} json",
    "<|channel|>commentary to={to}",
    " to={to}<|channel|>commentary <|constrain|>json",
    " to={to}<|channel|>commentary json",
    " to={to}<|channel|>commentary",
]


@dataclass(frozen=True)
class Completion:
    """Token ids of one completion; `spelled` when its text has ``<|`` in it (so only
    feeding it token by token can tell it from markers)."""

    tokens: list[int]
    spelled: bool


def text(rng: random.Random, spelled: bool, most: int = 10) -> str:
    """Random message text; with `spelled`, also control-token look-alikes."""
    pool = TEXT_PIECES + (SPELLED if spelled else [])
    return "".join(rng.choice(pool) for _ in range(rng.randint(0, most)))


def _arguments(rng: random.Random, spelled: bool) -> str:
    if rng.random() < 0.2:
        return rng.choice(["", "{}", "not json", "[1]", '{"a": '])
    value: dict[str, Any] = {"q": text(rng, spelled, 4), "n": rng.randint(0, 99)}
    return json.dumps(value, ensure_ascii=rng.random() < 0.5)


def _header(body: str, first: bool) -> str:
    return body if first else "<|start|>assistant" + body


def completion(rng: random.Random, encoding: Any, spelled: bool) -> Completion:
    """A completion: analysis and preamble messages, then a final answer or a tool call."""
    parts: list[tuple[str, bool]] = []  # (text, encoded with special tokens)
    count = rng.randint(0, 4)
    for i in range(count):
        channel = rng.choice(["analysis", "analysis", "commentary"])
        parts += [(_header(f"<|channel|>{channel}", i == 0) + "<|message|>", True)]
        parts += [(text(rng, spelled), False), ("<|end|>", True)]
    if rng.random() < 0.5:
        parts += [(_header("<|channel|>final", count == 0) + "<|message|>", True)]
        parts += [(text(rng, spelled), False), ("<|return|>", True)]
    else:
        to = rng.choice(["functions.get_weather", "functions.f", "python"])
        call = rng.choice(CALL_HEADERS).format(to=to)
        parts += [(_header(call, count == 0) + "<|message|>", True)]
        parts += [(_arguments(rng, spelled), False), ("<|call|>", True)]
    tokens: list[int] = []
    for piece, special in parts:
        if special:
            tokens += encoding.encode(piece, allowed_special="all")
        else:
            tokens += encoding.encode(piece, disallowed_special=())
    return Completion(tokens, any("<|" in piece for piece, special in parts if not special))
