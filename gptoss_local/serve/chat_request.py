"""A Chat Completions request (`POST /v1/chat/completions`) as an `ApiRequest`.

Messages map onto Harmony's: system and developer messages become the instructions (the
developer message's `# Instructions`; the system message is the model's own preamble), user
messages stay, an assistant message brings its `content`, its reasoning (`reasoning_content`,
or `reasoning` as some servers name it) and its `tool_calls`, and a tool message answers the
call whose `tool_call_id` it names. Our own client adds what this API cannot carry (`ours`).
"""

from __future__ import annotations

import json
from typing import Any

from gptoss_local.backends.base import ResponseFormat
from gptoss_local.conversation import Message
from gptoss_local.harmony.names import ToolNames
from gptoss_local.serve.api_request import RequestReader
from gptoss_local.serve.errors import bad_request
from gptoss_local.serve.fields import Body, each_message
from gptoss_local.serve.formats import chat_format
from gptoss_local.serve.limits import Limits
from gptoss_local.serve.ours import Ours, past_call, read_ours
from gptoss_local.urls import OURS_FIELD

# Content parts that hold text, in either API (reasoning items have their own two kinds).
TEXT_PARTS = ("text", "input_text", "output_text", "reasoning_text", "summary_text")


class ChatReader(RequestReader):
    """Reads a chat completion request (see the module's docstring)."""

    param = "messages"
    effort_param = "reasoning_effort"
    format_param = "response_format"
    max_keys = ("max_completion_tokens", "max_tokens")

    def refuse(self, body: Body) -> None:
        pass  # what only this API asks and the server cannot do: nothing yet

    def response_format(self, body: Body) -> ResponseFormat | None:
        return chat_format(body.data.get("response_format"))

    def history(
        self, body: Body, limits: Limits, names: ToolNames
    ) -> tuple[list[Message], str | None]:
        items = body.items("messages")
        limits.check_count(items or [], "messages")  # before reading them one by one
        return _messages(items, names)

    def ours(self, body: Body) -> Ours | None:
        return read_ours(body)

    def effort(self, body: Body) -> Any:
        reasoning = body.mapping("reasoning") or {}
        # llama-server's and vLLM's knobs for the chat template, as apps made for them send.
        template = body.mapping("chat_template_kwargs") or {}
        off = "none" if template.get("enable_thinking") is False else None
        for value in (body.data.get("reasoning_effort"), reasoning.get("effort"),
                      template.get("reasoning_effort"), off):  # fmt: skip
            if value is not None:
                return value
        return None

    def include_usage(self, body: Body) -> bool:
        return bool((body.mapping("stream_options") or {}).get("include_usage"))


def _messages(items: list[Any] | None, names: ToolNames) -> tuple[list[Message], str | None]:
    messages: list[Message] = []
    instructions: list[str] = []
    calls: dict[str, str] = {}  # tool_call_id -> the model's name of the function

    def read(item: dict[str, Any], where: str) -> None:
        role = item.get("role")
        if role in ("system", "developer"):
            instructions.append(text_of(item.get("content"), where))
        elif role == "user":
            messages.append(Message("user", text_of(item.get("content"), where)))
        elif role == "assistant":
            messages.append(_assistant(item, where, calls, names))
        elif role == "tool":
            name = calls.get(str(item.get("tool_call_id")))
            text = text_of(item.get("content"), where)
            messages.append(Message("tool", text, tool_name=name))
        else:
            raise bad_request(f"unknown role {role!r}", f"{where}.role")

    each_message(items, read)
    return messages, "\n\n".join(instructions) or None


def _assistant(
    item: dict[str, Any], where: str, calls: dict[str, str], names: ToolNames
) -> Message:
    reasoning = item.get("reasoning_content") or item.get("reasoning") or ""
    if not isinstance(reasoning, str):
        raise bad_request("reasoning_content must be a string", f"{where}.reasoning_content")
    records = []
    for number, call in enumerate(item.get("tool_calls") or ()):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise bad_request("a tool call needs function.name", f"{where}.tool_calls[{number}]")
        arguments = function.get("arguments") or "{}"
        if not isinstance(arguments, str):  # some clients send the object itself
            arguments = json.dumps(arguments, ensure_ascii=False)
        name = function["name"]  # our own client's recipients (browser.search) as they are
        name = name if isinstance(call.get(OURS_FIELD), dict) else names.model(name)
        record, answered = past_call(call, name, arguments)
        records.append(record)
        calls[str(call.get("id"))] = answered
    content = item.get("content")
    text = "" if content is None else text_of(content, where)
    return Message("assistant", text, reasoning=reasoning, tool_calls=tuple(records))


def text_of(content: Any, where: str) -> str:
    """A message's text: a string, or the text of its parts (text, input_text, output_text)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            kind = part.get("type") if isinstance(part, dict) else None
            if kind not in TEXT_PARTS:
                raise bad_request(f"content parts of type {kind!r} are not supported: gpt-oss "
                                  "reads text only", f"{where}.content")  # fmt: skip
            if not isinstance(part.get("text"), str):
                raise bad_request("a text part needs text", f"{where}.content")
            texts.append(part["text"])
        return "".join(texts)
    raise bad_request("content must be a string or an array of text parts", f"{where}.content")
