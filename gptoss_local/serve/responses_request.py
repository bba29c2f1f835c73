"""A Responses API request (`POST /v1/responses`) as a `Job`.

`input` is a string (one user message) or a list of items: messages (system and developer
ones become the instructions, with `instructions`), `reasoning`, `function_call` and
`function_call_output` items. A reasoning item, the assistant text after it and the function
calls after that form one Harmony assistant message, as the model wrote them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from gptoss_local.backends.base import GenerationSettings, ReplyRequest
from gptoss_local.conversation import Conversation, Message, ToolCallRecord
from gptoss_local.serve import job as read
from gptoss_local.serve.chat_request import text_of
from gptoss_local.serve.errors import bad_request
from gptoss_local.serve.job import Body, Job
from gptoss_local.serve.limits import Limits


def responses_job(
    data: Any,
    known_models: Sequence[str],
    defaults: GenerationSettings,
    limits: Limits | None = None,
) -> Job:
    """The job a Responses request asks for; a 400 `ApiError` names what is wrong.
    `limits`: the bounds of the loaded model's context (default: gpt-oss's full context)."""
    limits = limits or Limits()
    body = Body(data)
    model = read.model_name(body, known_models)
    read.refuse_unsupported(body)
    if body.flag("background"):
        raise bad_request("background responses are not supported", "background",
                          "unsupported_parameter")  # fmt: skip
    wanted = ((body.mapping("text") or {}).get("format") or {}).get("type", "text")
    if wanted != "text":
        raise bad_request(f"text.format {wanted!r} is not supported: only text", "text.format",
                          "unsupported_value")  # fmt: skip
    raw = body.data.get("input")
    if isinstance(raw, list):
        limits.check_count(raw, "input")  # before reading the items one by one
    history = _History()
    history.read(raw)
    instructions = "\n\n".join(filter(None, [body.text("instructions"), *history.instructions]))
    wished = (body.mapping("reasoning") or {}).get("effort")
    chosen = replace(defaults, effort=read.effort(wished, "reasoning.effort", defaults.effort))
    conversation = Conversation(tuple(history.messages), instructions or None, read.tools(body))
    return Job(
        model=model,
        request=ReplyRequest(
            read.checked(conversation, "input", limits),
            read.sampling(body, chosen, ("max_output_tokens",)),
        ),
        stops=read.stops(body.data.get("stop")),
        stream=body.flag("stream"),
        include_usage=True,
    )


@dataclass
class _Assistant:
    reasoning: str = ""
    content: str = ""
    calls: list[ToolCallRecord] = field(default_factory=list)


class _History:
    """Input items in order, assistant items grouped into Harmony messages."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.instructions: list[str] = []
        self._open: _Assistant | None = None
        self._calls: dict[str, str] = {}  # call_id -> function name

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
            parts = item.get("content") or item.get("summary") or []
            group = self._group(after_text=True)
            group.reasoning += text_of(parts, where)
        elif kind == "function_call":
            name, arguments = item.get("name"), item.get("arguments") or "{}"
            if not isinstance(name, str):
                raise bad_request("a function_call needs a name", f"{where}.name")
            if not isinstance(arguments, str):
                arguments = json.dumps(arguments, ensure_ascii=False)
            self._group(after_text=False).calls.append(ToolCallRecord(name, arguments))
            self._calls[str(item.get("call_id"))] = name
        elif kind == "function_call_output":
            self._close()
            output = item.get("output")
            text = output if isinstance(output, str) else text_of(output, where)
            name = self._calls.get(str(item.get("call_id")))
            self.messages.append(Message("tool", text, tool_name=name))
        else:
            raise bad_request(f"input items of type {kind!r} are not supported", f"{where}.type")

    def _message(self, item: dict[str, Any], where: str) -> None:
        role, text = item.get("role"), text_of(item.get("content"), where)
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
