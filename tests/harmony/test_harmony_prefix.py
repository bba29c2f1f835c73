"""The known start of the next prompt (`render_next_turn_prefix`): what prefill evaluates."""

from __future__ import annotations

import datetime as dt

import pytest

from gptoss_local.conversation import Message, Tool, ToolCallRecord
from gptoss_local.harmony import render_next_turn_prefix
from gptoss_local.harmony import render_prompt as render

DATE = dt.date(2026, 12, 2)
LOOKUP = Tool("lookup", "Looks a word up.", {"type": "object", "properties": {}})
HISTORIES = {
    "new chat": [],
    "one exchange": [Message("user", "hi"), Message("assistant", "Hello!", reasoning="greet")],
    "stopped without an answer": [Message("user", "hi"), Message("assistant", reasoning="hmm")],
    "a finished tool chain": [
        Message("user", "define cat"),
        Message("assistant", reasoning="look it up", tool_calls=(ToolCallRecord("lookup"),)),
        Message("tool", '{"cat": "a small feline"}'),
        Message("assistant", "A small feline.", reasoning="got it"),
    ],
    "an unanswered tool call": [
        Message("user", "define cat"),
        Message("assistant", reasoning="look it up", tool_calls=(ToolCallRecord("lookup"),)),
    ],
}


@pytest.mark.parametrize("name", HISTORIES)
@pytest.mark.parametrize("effort", ["low", "high"])
@pytest.mark.parametrize("keep", [False, True])
def test_the_prefix_starts_every_next_prompt(name: str, effort: str, keep: bool) -> None:
    history = HISTORIES[name]
    told = {"instructions": "Be brief.", "tools": [LOOKUP], "current_date": DATE}
    told |= {"keep_past_tool_calls": keep, "knowledge_cutoff": "2025-01"}
    prefix = render_next_turn_prefix(history, effort=effort, **told)
    for text in ("x", "a longer message\nwith lines", "<|start|>user"):
        nxt = render([*history, Message("user", text)], effort=effort, **told)
        assert nxt.startswith(prefix)
        assert nxt[len(prefix) :].startswith("<|start|>user<|message|>")


def test_the_last_replys_reasoning_is_not_in_the_prefix() -> None:
    history = HISTORIES["one exchange"]
    prefix = render_next_turn_prefix(history, current_date=DATE)
    assert "greet" not in prefix and prefix.endswith("Hello!<|end|>")


def test_a_new_chat_is_the_system_message_and_the_instructions() -> None:
    prefix = render_next_turn_prefix([], effort="high", instructions="Be brief.", current_date=DATE)
    assert prefix.startswith("<|start|>system<|message|>") and "Reasoning: high" in prefix
    assert prefix.endswith("Be brief.<|end|>") and prefix.count("<|start|>") == 2


def test_kept_calls_are_in_the_prefix_without_their_reasoning() -> None:
    history = HISTORIES["a finished tool chain"]
    told = {"tools": [LOOKUP], "current_date": DATE}
    kept = render_next_turn_prefix(history, keep_past_tool_calls=True, **told)
    assert "<|call|>" in kept and "a small feline" in kept and "look it up" not in kept
    dropped = render_next_turn_prefix(history, **told)
    assert "<|call|>" not in dropped and "a small feline" not in dropped
