"""Structured outputs: a reply held to a JSON schema while gpt-oss still reasons first.

- `check_schema(schema)` refuses, before anything runs, a schema the engine cannot hold an
  answer to: `SchemaError` (a ValueError) names the keyword (`.keyword`) and its place
  (`.path`, ``$.properties.tags``). Nothing is loaded for it. `SchemaLoop`, a SchemaError,
  is refs that loop with no way out (`loops.py`).
- `reply_grammar(request)` is the grammar the llama.cpp engine holds a reply to: the final
  message's JSON for a response format (the reasoning before it, and calls, stay free), or a
  call of the chosen tool with arguments held to its parameters for a forced tool choice.
  Schemas go through llama-cpp-python's kept converter (`gbnf.py`, `schema.py`, `pattern.py`).
- `gate.GrammarGate` samples under those grammars cheaply (see there).
- `check_answer(text, response_format)` and `check_arguments(text, parameters)` hold what was
  written to its schema with the `jsonschema` library (`AnswerError` says where it fails), for
  any engine: the caller's last word that the answer matches.
"""

from __future__ import annotations

from gptoss_local.backends.structured.answer import AnswerError, check_answer, check_arguments
from gptoss_local.backends.structured.harmony import ReplyGrammar, ToolChoiceError, reply_grammar
from gptoss_local.backends.structured.schema import check_schema
from gptoss_local.backends.structured.schema_error import SchemaError, SchemaLoop

__all__ = [
    "AnswerError",
    "ReplyGrammar",
    "SchemaError",
    "SchemaLoop",
    "ToolChoiceError",
    "check_answer",
    "check_arguments",
    "check_schema",
    "reply_grammar",
]
