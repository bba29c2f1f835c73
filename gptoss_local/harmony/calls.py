"""A tool call read from the model's output, as the `ToolCall` event (the record that goes back
into the conversation is `conversation.call_record`)."""

from __future__ import annotations

import json

from gptoss_local.events import ToolCall

# Built-in tools the model addresses without a namespace, and whose message is code, not JSON.
CODE_TOOLS = frozenset({"python"})


def tool_call(
    recipient: str, raw: str, *, cut: bool = False, channel: str = "commentary"
) -> ToolCall:
    """The call of `recipient` (``functions.NAME``, or a built-in such as ``python``) with
    the argument text `raw`.

    Args:
        recipient: Where the message went; the ``functions.`` namespace is left out.
        raw: The arguments as the model wrote them (empty: a call without arguments).
        cut: The output ended before the call did.
        channel: The channel the call was written on.

    Returns:
        The call, with parsed arguments, or with `error` set and `raw` kept.
    """
    name = recipient.removeprefix("functions.")
    if cut:
        error = "output ended before the tool call was complete"
        return ToolCall(name, {}, raw, error, channel)
    if recipient in CODE_TOOLS:
        return ToolCall(name, {"code": raw}, raw, None, channel)
    if not raw.strip():
        return ToolCall(name, {}, raw, None, channel)
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return ToolCall(name, {}, raw, f"arguments are not valid JSON: {exc}", channel)
    if not isinstance(value, dict):
        return ToolCall(name, {}, raw, "arguments are not a JSON object", channel)
    return ToolCall(name, value, raw, None, channel)
