"""A Responses API request (`POST /v1/responses`) as an `ApiRequest`.

`input` is a string (one user message) or a list of items: messages (system and developer
ones become the instructions, with `instructions`), `reasoning`, `function_call` and
`function_call_output` items, and `custom_tool_call` and `custom_tool_call_output` items (a
freeform tool's call, whose `input` is raw text, and its answer). A reasoning item, the
assistant text after it and the calls after that form one Harmony assistant message, as the
model wrote them; a reasoning item's `encrypted_content`, when this server wrote it
(`carried`), holds its chain of thought. A call with a `namespace` goes back to the tool of
that namespace.

What clients that keep no state send besides (Codex CLI: `store: false`, `include`,
`parallel_tool_calls`, `prompt_cache_key`, `client_metadata`, `reasoning.summary`, ids on
input items) is accepted: none of it changes the answer. `prompt_cache_key` scopes which
cached prompts the request may reuse (`RequestReader.read`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from gptoss_local.backends.base import ResponseFormat
from gptoss_local.conversation import FUNCTIONS, Message, Tool, ToolCallRecord
from gptoss_local.harmony.names import ToolNames
from gptoss_local.serve import fields
from gptoss_local.serve.api_request import RequestReader
from gptoss_local.serve.carried import unseal
from gptoss_local.serve.chat_request import text_of
from gptoss_local.serve.errors import bad_request
from gptoss_local.serve.fields import Body
from gptoss_local.serve.formats import responses_format
from gptoss_local.serve.limits import Limits

ENCRYPTED_REASONING = "reasoning.encrypted_content"
# `include` values that ask for what this server cannot give.
NOT_INCLUDED = {"message.output_text.logprobs": "logprobs are not available"}
SUMMARIES = ("auto", "concise", "detailed", "none")


class ResponsesReader(RequestReader):
    """Reads a Responses request (see the module's docstring)."""

    param = "input"
    effort_param = "reasoning.effort"
    format_param = "text.format"
    max_keys = ("max_output_tokens",)
    responses = True

    def refuse(self, body: Body) -> None:
        if body.flag("background"):
            raise bad_request("background responses are not supported", "background",
                              "unsupported_parameter")  # fmt: skip
        for key in ("store", "parallel_tool_calls"):
            body.flag(key)
        body.mapping("client_metadata")
        summary = (body.mapping("reasoning") or {}).get("summary")
        if summary is not None and summary not in SUMMARIES:
            raise bad_request(f"reasoning.summary must be one of {', '.join(SUMMARIES)}",
                              "reasoning.summary")  # fmt: skip
        for value in self._include(body):
            if value in NOT_INCLUDED:
                raise bad_request(NOT_INCLUDED[value], "include", "unsupported_value")

    def history(
        self, body: Body, limits: Limits, names: ToolNames
    ) -> tuple[list[Message], str | None]:
        raw = body.data.get("input")
        if isinstance(raw, list):
            limits.check_count(raw, "input")  # before reading the items one by one
        history = _History(names)
        history.read(raw)
        given = [body.text("instructions"), *history.instructions]
        return history.messages, "\n\n".join(filter(None, given)) or None

    def effort(self, body: Body) -> Any:
        return (body.mapping("reasoning") or {}).get("effort")

    def include_usage(self, body: Body) -> bool:
        return True

    def response_format(self, body: Body) -> ResponseFormat | None:
        return responses_format(body.data.get("text"))

    def tools(self, body: Body, names: ToolNames) -> tuple[Tool, ...]:
        return fields.tools(body, names, responses=True)

    def summarise_reasoning(self, body: Body) -> bool:
        summary = (body.mapping("reasoning") or {}).get("summary")
        return summary in SUMMARIES and summary != "none"

    def carry_reasoning(self, body: Body) -> bool:
        return ENCRYPTED_REASONING in self._include(body)

    @staticmethod
    def _include(body: Body) -> list[str]:
        found = body.items("include") or []
        if not all(isinstance(value, str) for value in found):
            raise bad_request("include must be an array of strings", "include")
        return found


@dataclass
class _Assistant:
    reasoning: str = ""
    content: str = ""
    calls: list[ToolCallRecord] = field(default_factory=list)


class _History:
    """Input items in order, assistant items grouped into Harmony messages; the tools by the
    model's names for them (`names`)."""

    def __init__(self, names: ToolNames) -> None:
        self.names = names
        self.messages: list[Message] = []
        self.instructions: list[str] = []
        self._open: _Assistant | None = None
        self._calls: dict[str, str] = {}  # call_id -> the model's name of the tool

    def read(self, raw: Any) -> None:
        if isinstance(raw, str):
            self.messages.append(Message("user", raw))
            return
        if not isinstance(raw, list) or not raw:
            raise bad_request("input must be a string or a non-empty array of items", "input")
        for index, item in enumerate(raw):
            where = f"input[{index}]"
            if not isinstance(item, dict):
                raise bad_request("each input item must be an object", where)
            try:
                self._item(item, where)
            except ValueError as exc:  # a name the renderer refuses
                raise bad_request(str(exc), where) from None
        self._close()

    def _item(self, item: dict[str, Any], where: str) -> None:
        kind = item.get("type", "message")
        if kind == "message":
            self._message(item, where)
        elif kind == "reasoning":
            carried = unseal(item.get("encrypted_content"))
            parts = item.get("content") or item.get("summary") or []
            group = self._group(after_text=True)
            group.reasoning += text_of(parts, where) if carried is None else carried
        elif kind == "function_call":
            arguments = item.get("arguments") or "{}"
            if not isinstance(arguments, str):
                arguments = json.dumps(arguments, ensure_ascii=False)
            self._call(item, arguments, where)
        elif kind == "custom_tool_call":
            text = item.get("input") or ""
            if not isinstance(text, str):
                raise bad_request("a custom_tool_call's input must be text", f"{where}.input")
            self._call(item, text, where)  # the renderer writes it raw, the tool's freeform
        elif kind in ("function_call_output", "custom_tool_call_output"):
            self._close()
            output = item.get("output")
            text = output if isinstance(output, str) else text_of(output, where)
            name = self._calls.get(str(item.get("call_id")))
            self.messages.append(Message("tool", text, tool_name=name))
        else:
            raise bad_request(f"input items of type {kind!r} are not supported", f"{where}.type")

    def _call(self, item: dict[str, Any], arguments: str, where: str) -> None:
        """A call item, into the assistant message being gathered."""
        name, namespace = item.get("name"), item.get("namespace") or FUNCTIONS
        if not isinstance(name, str) or not isinstance(namespace, str):
            raise bad_request(f"a {item['type']} needs a name (and a namespace, text)",
                              f"{where}.name")  # fmt: skip
        space = self.names.namespaces.model(namespace)
        call = ToolCallRecord(self.names.model(name), arguments, namespace=space)
        self._group(after_text=False).calls.append(call)
        self._calls[str(item.get("call_id"))] = call.name

    def _message(self, item: dict[str, Any], where: str) -> None:
        content = item.get("content")
        role, text = item.get("role"), "" if content is None else text_of(content, where)
        if role in ("system", "developer"):
            self.instructions.append(text)
        elif role == "user":
            self._close()
            self.messages.append(Message("user", text))
        elif role == "assistant":
            self._group(after_text=True).content += text
        else:
            raise bad_request(f"unknown role {role!r}", f"{where}.role")

    def _group(self, after_text: bool) -> _Assistant:
        """The assistant message being gathered; reasoning or text after a call starts anew."""
        if self._open is not None and after_text and self._open.calls:
            self._close()
        if self._open is None:
            self._open = _Assistant()
        return self._open

    def _close(self) -> None:
        group, self._open = self._open, None
        if group is not None:
            self.messages.append(Message("assistant", group.content, reasoning=group.reasoning,
                                         tool_calls=tuple(group.calls)))  # fmt: skip
