"""JSON schemas of response formats and tool parameters, checked for every engine.

- `check_schema(schema)` refuses, before anything runs, a schema the engine cannot hold an
  answer to: `SchemaError` (a ValueError) names the keyword (`.keyword`) and its place
  (`.path`, ``$.properties.tags``). Nothing is loaded for it. `SchemaLoop`, a SchemaError,
  is refs that loop with no way out (`loops.py`). `keywords.prepare` is the schema as
  llama.cpp's grammar converter is given it (`backends/llamacpp/structured/`).
- `check_answer(text, response_format)` and `check_arguments(text, parameters)` hold what was
  written to its schema with the `jsonschema` library (`AnswerError` says where it fails), for
  any engine: the caller's last word that the answer matches.

Below the engines in the layers: serve and `run` check a schema here without importing one.
"""

from __future__ import annotations

from gptoss_local.schemas.answer import AnswerError, check_answer, check_arguments
from gptoss_local.schemas.errors import SchemaError, SchemaLoop
from gptoss_local.schemas.keywords import check_schema

__all__ = [
    "AnswerError",
    "SchemaError",
    "SchemaLoop",
    "check_answer",
    "check_arguments",
    "check_schema",
]
