"""A tool call read from the model's output, as the `ToolCall` event."""

from __future__ import annotations

import json

from gptoss_local.events import ToolCall


def tool_call(recipient: str, raw: str, *, cut: bool = False) -> ToolCall:
    """The call of `recipient` (``functions.NAME``) with the argument text `raw`.

    Args:
        recipient: Where the message went; the ``functions.`` namespace is left out.
        raw: The arguments as the model wrote them (empty: a call without arguments).
        cut: The output ended before the call did.

    Returns:
        The call, with parsed arguments, or with `error` set and `raw` kept.
    """
    name = recipient.removeprefix("functions.")
    if cut:
        return ToolCall(name, {}, raw, "output ended before the tool call was complete")
    if not raw.strip():
        return ToolCall(name, {}, raw)
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return ToolCall(name, {}, raw, f"arguments are not valid JSON: {exc}")
    if not isinstance(value, dict):
        return ToolCall(name, {}, raw, "arguments are not a JSON object")
    return ToolCall(name, value, raw)
