"""A tool call read from the model's output, as the `ToolCall` event."""

from __future__ import annotations

import json

from gptoss_local.events import ToolCall
from gptoss_local.harmony.render import CALL_CHANNELS, ToolCallRecord

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


def call_record(call: ToolCall) -> ToolCallRecord | None:
    """The call as it goes back into a prompt, or None when its name cannot be a tool's (the
    model addressed something that is none, e.g. ``browser.search``): no tool could have
    answered it, so the model loses nothing when it is left out.

    Arguments that did not parse go back as the model wrote them; a call on an odd channel
    goes back where function calls belong.
    """
    channel = call.channel if call.channel in CALL_CHANNELS else "commentary"
    try:
        return ToolCallRecord(call.name, call.raw if call.error else call.arguments, channel)
    except ValueError:
        return None
