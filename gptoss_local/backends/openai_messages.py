"""Our `Conversation` and `GenerationSettings` as a Chat Completions request body.

The server renders the Harmony prompt itself. Instructions go first as a system message (which
gpt-oss servers put into the developer message); each past tool call gets an id, and the tool
result that answers it names that id. Reasoning is sent back only on the assistant messages of
the tool chain in progress (`reasoning_content`), the one place Harmony keeps it.
"""

from __future__ import annotations

import json
from typing import Any

from gptoss_local.backends.base import GenerationSettings
from gptoss_local.conversation import Conversation, Message, Tool


def chat_body(
    model: str, conversation: Conversation, settings: GenerationSettings
) -> dict[str, Any]:
    """The JSON of a streamed chat completion request."""
    messages: list[dict[str, Any]] = []
    if conversation.instructions:
        messages.append({"role": "system", "content": conversation.instructions})
    messages += _messages(list(conversation.messages))
    body: dict[str, Any] = {
        "model": model,
        "messages": messages,
        "stream": True,
        "stream_options": {"include_usage": True},
        "reasoning_effort": settings.effort,
        "temperature": settings.temperature,
        "top_p": settings.top_p,
    }
    if conversation.tools:
        body["tools"] = [_tool(t) for t in conversation.tools]
    if settings.max_tokens is not None:
        body["max_tokens"] = settings.max_tokens
    if settings.seed is not None:
        body["seed"] = settings.seed
    if settings.top_k:  # not OpenAI's, but llama.cpp's and vLLM's servers take them
        body["top_k"] = settings.top_k
    if settings.min_p:
        body["min_p"] = settings.min_p
    return body


def _messages(history: list[Message]) -> list[dict[str, Any]]:
    last_user = max((i for i, m in enumerate(history) if m.role == "user"), default=-1)
    out: list[dict[str, Any]] = []
    unanswered: list[tuple[str, str]] = []  # (id, name) of calls still without a result
    for index, message in enumerate(history):
        if message.role == "user":
            out.append({"role": "user", "content": message.content})
        elif message.role == "tool":
            out.append(_result(message, unanswered))
        else:
            entry: dict[str, Any] = {"role": "assistant", "content": message.content}
            if message.tool_calls:
                calls = [(f"call_{len(out)}_{n}", c) for n, c in enumerate(message.tool_calls)]
                unanswered += [(ident, call.name) for ident, call in calls]
                entry["tool_calls"] = [
                    {"id": ident, "type": "function",
                     "function": {"name": call.name, "arguments": _arguments(call.arguments)}}
                    for ident, call in calls
                ]  # fmt: skip
                entry["content"] = message.content or None
                if index > last_user and message.reasoning:
                    entry["reasoning_content"] = message.reasoning
            out.append(entry)
    return out


def _result(message: Message, unanswered: list[tuple[str, str]]) -> dict[str, Any]:
    """A tool result, answering the oldest open call of its tool (or the oldest open call)."""
    match = next((c for c in unanswered if c[1] == message.tool_name), None)
    match = match or (unanswered[0] if unanswered else None)
    entry = {"role": "tool", "content": message.content}
    if match is not None:
        unanswered.remove(match)
        entry["tool_call_id"] = match[0]
    return entry


def _arguments(arguments: dict[str, Any] | str) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)


def _tool(tool: Tool) -> dict[str, Any]:
    function: dict[str, Any] = {"name": tool.name, "description": tool.description}
    if tool.parameters is not None:  # left out, a function takes no arguments: `() => any`
        function["parameters"] = tool.parameters
    return {"type": "function", "function": function}
