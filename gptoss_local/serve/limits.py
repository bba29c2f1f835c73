"""Bounds on the work one request may cause before the model sees it, checked cheapest first.

A request's text is tokenized and evaluated while it holds the model, so a body that can never
fit the context must be refused before that: by counting its messages (each Harmony message
costs at least its framing, `<|start|>role<|message|>…<|end|>`), its tools and the size of
each tool's schema, and then the length of the rendered prompt against a generous multiple of
the context. What passes these is still counted exactly by the engine, which refuses a prompt
over the context (`context_length_exceeded` as well).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from gptoss_local.serve.errors import ApiError, bad_request

TOKENS_PER_MESSAGE = 4  # <|start|>, the role, <|message|>, <|end|>: even an empty message
# Prose averages about 4 characters a token and code rarely over 8; a prompt more than 32 times
# its context in characters cannot fit, and tokenizing it would only waste the model's time.
CHARS_PER_TOKEN = 32
MAX_TOOLS = 128  # OpenAI's own limit for one request
MAX_TOOL_CHARS = 64 * 1024  # one tool's JSON; large MCP schemas are a few KiB
MAX_STOP_CHARS = 256  # a stop string is held back and compared at every token
GPT_OSS_CONTEXT = 131_072


@dataclass(frozen=True)
class Limits:
    """The bounds for a model with `context` tokens of context."""

    context: int = GPT_OSS_CONTEXT

    @property
    def max_messages(self) -> int:
        """More messages (or input items) than this can never fit the context."""
        return max(1, self.context // TOKENS_PER_MESSAGE)

    @property
    def max_chars(self) -> int:
        """A rendered prompt longer than this is refused without tokenizing it."""
        return self.context * CHARS_PER_TOKEN

    def check_count(self, items: list[Any], param: str) -> None:
        """Refuse more messages (or input items) than the context could hold."""
        if len(items) > self.max_messages:
            raise too_long(
                f"{len(items):,} messages cannot fit the model's {self.context:,}-token context "
                f"(each takes at least {TOKENS_PER_MESSAGE} tokens; at most "
                f"{self.max_messages:,})",
                param,
            )

    def check_prompt(self, prompt: str, param: str) -> None:
        """Refuse a rendered prompt far longer than the context could hold."""
        if len(prompt) > self.max_chars:
            raise too_long(
                f"the conversation is {len(prompt):,} characters, far more than the model's "
                f"{self.context:,}-token context holds: shorten it (leave out or summarise "
                "earlier messages)",
                param,
            )


def check_tools(items: list[Any]) -> None:
    """Refuse more tools than `MAX_TOOLS`, or a tool whose JSON is over `MAX_TOOL_CHARS`."""
    if len(items) > MAX_TOOLS:
        raise bad_request(f"at most {MAX_TOOLS} tools may be offered, not {len(items):,}", "tools")
    for index, item in enumerate(items):
        size = len(json.dumps(item, ensure_ascii=False))
        if size > MAX_TOOL_CHARS:
            raise bad_request(
                f"tool {index} is {size:,} characters of JSON; at most {MAX_TOOL_CHARS:,}",
                f"tools[{index}]",
            )


def check_stops(stops: list[str]) -> None:
    """Refuse a stop string over `MAX_STOP_CHARS`."""
    for stop in stops:
        if len(stop) > MAX_STOP_CHARS:
            raise bad_request(f"a stop string may be at most {MAX_STOP_CHARS} characters", "stop")


def too_long(message: str, param: str) -> ApiError:
    """The 400 for a request that cannot fit the context, with OpenAI's code for it."""
    return bad_request(message, param, "context_length_exceeded")
