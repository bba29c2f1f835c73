"""The Harmony chat format of gpt-oss: prompt rendering and streaming output parsing.

Prompts are text with control tokens written as their strings (``<|start|>`` ...), which the
backend tokenizes with special-token parsing on; untrusted text is neutralised by the
renderer, so it can never turn into control tokens. The layout is openai-harmony's, byte for
byte. The parser reads output as text, or token by token told which tokens are control tokens.
What is rendered (messages, tools, the conversation) is `gptoss_local.conversation`'s.
"""

from __future__ import annotations

from gptoss_local.events import merge_events
from gptoss_local.harmony.neutralise import (
    CONTROL_TOKENS,
    WORD_JOINER,
    is_control_token,
    neutralise,
)
from gptoss_local.harmony.parse import HarmonyStreamParser, parse_completion
from gptoss_local.harmony.prefix import render_next_turn_prefix
from gptoss_local.harmony.render import EFFORTS, render_prompt

__all__ = [
    "CONTROL_TOKENS",
    "EFFORTS",
    "WORD_JOINER",
    "HarmonyStreamParser",
    "is_control_token",
    "merge_events",
    "neutralise",
    "parse_completion",
    "render_next_turn_prefix",
    "render_prompt",
]
