"""Ollama's conversation as Harmony's messages.

`/api/chat`'s `messages`: system messages become the instructions; user messages stay; an
assistant message brings back its `content`, its `thinking` (the chain of thought, which
gpt-oss keeps through a turn still calling tools) and its `tool_calls` (arguments as an object,
or as JSON text); a tool message answers the call its `tool_name` names (or, as LangChain
sends it, the call whose id `tool_call_id` names; else the oldest call of the assistant message
before it not answered yet).
`/api/generate`'s `prompt` is one user message and its `system` the instructions.
Images are refused: gpt-oss reads text only.
"""

from __future__ import annotations

import json
from typing import Any

from gptoss_local.conversation import Message, ToolCallRecord
from gptoss_local.harmony.names import ToolNames
from gptoss_local.serve.errors import bad_request
from gptoss_local.serve.fields import Body, each_message

TEXT_ONLY = "gpt-oss reads text only"


def chat_history(items: list[Any] | None, names: ToolNames) -> tuple[list[Message], str | None]:
    """The messages of `/api/chat`, and the instructions (None without any); tools by the
    model's names for them (`names`)."""
    messages: list[Message] = []
    instructions: list[str] = []
    calls: dict[str, str] = {}  # a call's id (LangChain sends one) -> the model's tool name
    pending: list[str] = []  # the last assistant message's calls not answered yet

    def read(item: dict[str, Any], where: str) -> None:
        role, content = item.get("role"), _text(item, "content", where)
        if item.get("images"):
            raise bad_request(f"images are not supported: {TEXT_ONLY}", f"{where}.images")
        if role == "system":
            instructions.append(content)
        elif role == "user":
            messages.append(Message("user", content))
        elif role == "assistant":
            messages.append(_assistant(item, content, where, calls, names))
            pending[:] = [c.name for c in messages[-1].tool_calls]
        elif role == "tool":
            name = _answered(item, where, calls, pending, names)
            messages.append(Message("tool", content, tool_name=name))
        else:
            raise bad_request(f"unknown role {role!r}", f"{where}.role")

    each_message(items, read)
    return messages, "\n\n".join(instructions) or None


def generate_history(body: Body) -> tuple[list[Message], str | None]:
    """`/api/generate`'s prompt as one user message, and its `system` as the instructions."""
    if body.data.get("images"):
        raise bad_request(f"images are not supported: {TEXT_ONLY}", "images")
    prompt = body.text("prompt")
    if not prompt:
        raise bad_request("prompt must be a non-empty string", "prompt")
    return [Message("user", prompt)], body.text("system") or None


def _assistant(
    item: dict[str, Any], content: str, where: str, calls: dict[str, str], names: ToolNames
) -> Message:
    thinking = _text(item, "thinking", where)
    records = []
    given = item.get("tool_calls") or []
    if not isinstance(given, list):
        raise bad_request("tool_calls must be an array", f"{where}.tool_calls")
    for number, call in enumerate(given):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise bad_request("a tool call needs function.name", f"{where}.tool_calls[{number}]")
        arguments = function.get("arguments")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, (dict, str)):
            raise bad_request("a tool call's arguments must be an object",
                              f"{where}.tool_calls[{number}].function.arguments")  # fmt: skip
        if isinstance(arguments, dict):
            arguments = json.dumps(arguments, ensure_ascii=False)
        name = names.model(function["name"])
        records.append(ToolCallRecord(name, arguments))
        if call.get("id") is not None:
            calls[str(call["id"])] = name
    return Message("assistant", content, reasoning=thinking, tool_calls=tuple(records))


def _answered(
    item: dict[str, Any], where: str, calls: dict[str, str], pending: list[str], names: ToolNames
) -> str | None:
    """The model's name of the tool a result answers: `tool_name`, or the call `tool_call_id`
    names; else the oldest call not answered yet (the ollama client drops a call's id on the
    way)."""
    given = _text(item, "tool_name", where)
    name = names.model(given) if given else calls.get(str(item.get("tool_call_id")))
    if name in pending:
        pending.remove(name)
    elif not name and pending:
        name = pending.pop(0)
    return name or None


def _text(item: dict[str, Any], key: str, where: str) -> str:
    value = item.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise bad_request(f"{key} must be a string", f"{where}.{key}")
    return value
