"""Our `ReplyRequest` (conversation, settings, what the reply is asked besides) as a Chat
Completions request body.

The server renders the Harmony prompt itself. Instructions go first as a system message (which
gpt-oss servers put into the developer message); each past tool call gets an id, and the tool
result that answers it names that id. Reasoning is sent back only on the assistant messages of
the tool chain in progress (`reasoning_content`), the one place Harmony keeps it.

To our own engine (`ours`) the request also carries what Chat Completions cannot, in the field
only our engine reads (`urls.OURS_FIELD`): the built-in tools, tools of other namespaces, the
conversation's date, and each past call's recipient, channel and arguments as recorded, so the
engine renders the prompt exactly as this process would.
"""

from __future__ import annotations

import json
from typing import Any

from gptoss_local.backends.base import ReplyRequest, ResponseFormat
from gptoss_local.conversation import FUNCTIONS, Conversation, Message, Tool, ToolCallRecord
from gptoss_local.harmony.tools import builtin_json, namespace_json
from gptoss_local.urls import OURS_FIELD


def chat_body(model: str, request: ReplyRequest, ours: bool = False) -> dict[str, Any]:
    """The JSON of a streamed chat completion request (`ours`: to our own engine, with
    `OURS_FIELD`)."""
    conversation, settings = request.conversation, request.settings
    messages: list[dict[str, Any]] = []
    if conversation.instructions:
        messages.append({"role": "system", "content": conversation.instructions})
    messages += _messages(list(conversation.messages), ours)
    body: dict[str, Any] = {
        "model": model,
        "messages": messages,
        "stream": True,
        "stream_options": {"include_usage": True},
        "reasoning_effort": settings.effort,
        "temperature": settings.temperature,
        "top_p": settings.top_p,
    }
    functions = [_tool(t) for t in conversation.tools if t.namespace == FUNCTIONS or not ours]
    if functions:
        body["tools"] = functions
    if settings.max_tokens is not None:
        body["max_tokens"] = settings.max_tokens
    if settings.seed is not None:
        body["seed"] = settings.seed
    if settings.top_k:  # not OpenAI's, but llama.cpp's and vLLM's servers take them
        body["top_k"] = settings.top_k
    if settings.min_p:
        body["min_p"] = settings.min_p
    body.update(_asked(request))
    if ours:
        body[OURS_FIELD] = _ours(conversation)
    return body


def _ours(conversation: Conversation) -> dict[str, Any]:
    """What only our engine reads: the built-ins, the tools outside `functions`, the date."""
    spaces = sorted({t.namespace for t in conversation.tools} - {FUNCTIONS})
    fields: dict[str, Any] = {
        "builtin_tools": [builtin_json(b) for b in conversation.builtin_tools],
        "tools": [namespace_json(space, [t for t in conversation.tools if t.namespace == space])
                  for space in spaces],
    }  # fmt: skip
    if conversation.current_date is not None:
        fields["current_date"] = conversation.current_date.isoformat()
    return fields


def _asked(request: ReplyRequest) -> dict[str, Any]:
    """What the request asks of the reply besides sampling, in OpenAI's fields; left out
    where it asks nothing (a server that lacks one then never sees it)."""
    settings = request.settings
    fields: dict[str, Any] = {}
    if request.response_format is not None:
        fields["response_format"] = response_format(request.response_format)
    choice = request.tool_choice
    if choice.name is not None:
        fields["tool_choice"] = {"type": "function", "function": {"name": choice.name}}
    elif choice.required:
        fields["tool_choice"] = "required"
    if settings.frequency_penalty:
        fields["frequency_penalty"] = settings.frequency_penalty
    if settings.presence_penalty:
        fields["presence_penalty"] = settings.presence_penalty
    if settings.logit_bias:
        fields["logit_bias"] = {str(token): bias for token, bias in settings.logit_bias}
    if request.cache_key is not None:  # replies reuse only their own key's cached prompts
        fields["prompt_cache_key"] = request.cache_key
    return fields


def response_format(asked: ResponseFormat) -> dict[str, Any]:
    """A `ResponseFormat` as Chat Completions' `response_format`: a named JSON schema, or
    any JSON object."""
    if asked.schema is None:
        return {"type": "json_object"}
    schema = {"name": asked.name, "schema": asked.schema, "strict": asked.strict}
    return {"type": "json_schema", "json_schema": schema}


def _messages(history: list[Message], ours: bool) -> list[dict[str, Any]]:
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
                entry["tool_calls"] = [_call(ident, call, ours) for ident, call in calls]
                entry["content"] = message.content or None
                if index > last_user and message.reasoning:
                    entry["reasoning_content"] = message.reasoning
            out.append(entry)
    return out


def _call(ident: str, call: ToolCallRecord, ours: bool) -> dict[str, Any]:
    """A past call; to our engine with its recipient (``browser.search``), its channel and its
    arguments as recorded (python's code is no JSON text)."""
    name = call.name
    if ours and call.namespace != FUNCTIONS:
        name = f"{call.namespace}.{call.name}"
    function = {"name": name, "arguments": _arguments(call.arguments)}
    out: dict[str, Any] = {"id": ident, "type": "function", "function": function}
    if ours:
        out[OURS_FIELD] = {"channel": call.channel, "arguments": call.arguments}
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
