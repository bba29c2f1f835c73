"""Our `Conversation` and `GenerationSettings` as the arguments of Ollama's /api/chat.

Ollama renders the Harmony prompt itself from these messages, so reasoning travels as
`thinking` and tool calls as `tool_calls` on the assistant message they belong to. A built-in
tool (python) travels as a function of its name taking ``{"code": ...}``: Ollama's gpt-oss
template renders a function named ``python`` as the built-in.
"""

from __future__ import annotations

import json
from typing import Any

from gptoss_local.backends.base import GenerationSettings, ResponseFormat
from gptoss_local.conversation import BuiltinTool, Conversation, Message, Tool


def chat_request(
    conversation: Conversation,
    settings: GenerationSettings,
    context: int,
    response_format: ResponseFormat | None = None,
) -> dict[str, Any]:
    """`messages`, `tools`, `options` and `format` for `Client.chat` (model, think, stream
    added there)."""
    messages: list[dict[str, Any]] = []
    if conversation.instructions:
        messages.append({"role": "system", "content": conversation.instructions})
    messages += [to_message(m) for m in conversation.messages]
    request: dict[str, Any] = {"messages": messages, "options": options(settings, context)}
    tools = [to_tool(t) for t in conversation.tools]
    tools += [builtin_tool(b) for b in conversation.builtin_tools]
    if tools:
        request["tools"] = tools
    if response_format is not None:
        request["format"] = to_format(response_format)
    return request


def to_format(response_format: ResponseFormat) -> dict[str, Any] | str:
    """Ollama's `format`: the JSON schema itself, or "json" for any JSON. Ollama holds the
    answer to it with a grammar; for gpt-oss the reasoning before it stays free as long as a
    think level is sent with it (the backend always sends the effort)."""
    return response_format.schema if response_format.schema is not None else "json"


def to_message(message: Message) -> dict[str, Any]:
    """One history message in Ollama's shape."""
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.role == "assistant" and message.reasoning:
        out["thinking"] = message.reasoning
    if message.tool_calls:
        out["tool_calls"] = [
            {"function": {"name": c.name, "arguments": _arguments(c.arguments, c.name)}}
            for c in message.tool_calls
        ]
    if message.role == "tool" and message.tool_name:
        out["tool_name"] = message.tool_name
    return out


def _arguments(arguments: dict[str, Any] | str, name: str) -> dict[str, Any]:
    if isinstance(arguments, dict):
        return arguments
    if name == "python":  # the built-in's argument is its code
        return {"code": arguments}
    try:
        parsed = json.loads(arguments)
    except ValueError:
        return {}  # Ollama accepts objects only; unparsable text the model wrote is dropped
    return parsed if isinstance(parsed, dict) else {}


def to_tool(tool: Tool) -> dict[str, Any]:
    """A function tool as OpenAI-style JSON."""
    parameters = tool.parameters or {"type": "object", "properties": {}}
    return {"type": "function",
            "function": {"name": tool.name, "description": tool.description,
                         "parameters": parameters}}  # fmt: skip


def builtin_tool(tool: BuiltinTool) -> dict[str, Any]:
    """A built-in tool as the function Ollama's template recognises by its name."""
    code = {"type": "string", "description": "Python code to run"}
    return {"type": "function",
            "function": {"name": tool.name, "description": tool.description,
                         "parameters": {"type": "object", "properties": {"code": code},
                                        "required": ["code"]}}}  # fmt: skip


def options(settings: GenerationSettings, context: int) -> dict[str, Any]:
    """Ollama's sampling options. Grammar and logit bias have no Ollama equivalent; its
    frequency and presence penalties are accepted but ignored by the runner gpt-oss uses
    (ollama/ollama#15783), so they are not sent (the backend declares it cannot apply them)."""
    out: dict[str, Any] = {"num_ctx": context, "temperature": settings.temperature,
                           "top_p": settings.top_p}  # fmt: skip
    if settings.top_k:
        out["top_k"] = settings.top_k
    if settings.min_p:
        out["min_p"] = settings.min_p
    if settings.seed is not None:
        out["seed"] = settings.seed
    if settings.max_tokens is not None:
        out["num_predict"] = settings.max_tokens
    return out
