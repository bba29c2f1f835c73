"""Structured outputs on llama.cpp: a reply held to a JSON schema while gpt-oss still reasons
first.

- `reply_grammar(request)` is the grammar the engine holds a reply to: the final message's
  JSON for a response format (the reasoning before it, and calls, stay free), or a call of the
  chosen tool with arguments held to its parameters for a forced tool choice. Schemas go
  through llama-cpp-python's kept converter (`gbnf.py`), given them as `gptoss_local.schemas`
  prepares them (which keywords it holds, `SchemaError` for the rest).
- `gate.GrammarGate` samples under those grammars cheaply (see there).
"""

from __future__ import annotations

from gptoss_local.backends.llamacpp.structured.harmony import (
    ReplyGrammar,
    ToolChoiceError,
    reply_grammar,
)

__all__ = ["ReplyGrammar", "ToolChoiceError", "reply_grammar"]
