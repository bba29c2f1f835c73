"""A reply in the Responses API shape: output items (reasoning, message, function_call,
custom_tool_call) in the order the model wrote them, as one `response` object or as its
stream of typed events.

A call to a tool of a namespace is a `function_call` with the tool's `name` and its
`namespace` (as OpenAI sends them; Codex refuses a dotted name). A call to a freeform tool of
the request is a `custom_tool_call` whose `input` is the text the model wrote (unwrapped when
the model wrapped it in JSON anyway; its grammar was shown to the model, not enforced). When
the request's `include` asks for `reasoning.encrypted_content`, each reasoning item carries its
text there too (`carried`), for the client to send back."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator
from typing import Any

from gptoss_local.backends.base import Stats
from gptoss_local.conversation import FUNCTIONS, AssistantDraft, DraftPart, Tool, split_recipient
from gptoss_local.events import TEXT_EVENTS, Event, ToolCall
from gptoss_local.harmony.names import ToolNames
from gptoss_local.serve.api_request import ApiRequest
from gptoss_local.serve.carried import seal
from gptoss_local.serve.chat_reply import new_id
from gptoss_local.serve.choice import choice_as_given
from gptoss_local.serve.formats import as_given
from gptoss_local.serve.generation import Generation

StreamEvent = dict[str, Any]


def usage(stats: Stats | None) -> dict[str, Any]:
    """Token counts as the Responses API reports them."""
    s = stats or Stats()
    return {
        "input_tokens": s.prompt_tokens,
        "input_tokens_details": {"cached_tokens": s.cached_tokens},
        "output_tokens": s.generated_tokens,
        "output_tokens_details": {"reasoning_tokens": s.reasoning_tokens},
        "total_tokens": s.prompt_tokens + s.generated_tokens,
    }


class ResponsesReply:
    """The reply to one Responses request."""

    def __init__(self, asked: ApiRequest) -> None:
        self.asked = asked
        self.id = new_id("resp_")
        self.created = int(time.time())
        self.output: list[dict[str, Any]] = []
        self._draft = AssistantDraft()  # where each output item begins
        self._open: dict[str, Any] | None = None  # the reasoning or message item being written
        self._sequence = 0
        tools = asked.request.conversation.tools
        self._freeform = {(t.namespace, t.name) for t in tools if t.text_input is not None}

    def response(self, generation: Generation | None = None) -> dict[str, Any]:
        """The response object: in progress without `generation`, else as it ended."""
        s, c = self.asked.request.settings, self.asked.request.conversation
        status, details = "in_progress", None
        if generation is not None:
            status = "incomplete" if generation.finish == "length" else "completed"
            details = {"reason": "max_output_tokens"} if status == "incomplete" else None
        return {
            "id": self.id, "object": "response", "created_at": self.created, "status": status,
            "model": self.asked.model, "output": list(self.output) if generation else [],
            "usage": usage(generation.stats) if generation else None, "error": None,
            "incomplete_details": details, "instructions": c.instructions,
            "max_output_tokens": s.max_tokens, "temperature": s.temperature, "top_p": s.top_p,
            "reasoning": {"effort": s.effort,
                          "summary": "auto" if self.asked.summarise_reasoning else None},
            "tool_choice": choice_as_given(self.asked.request.tool_choice, self.asked.names),
            "tools": tools_as_given(c.tools, self.asked.names), "parallel_tool_calls": False,
            "store": False,
            "text": {"format": as_given(self.asked.request.response_format)},
            "metadata": {},
        }  # fmt: skip

    def whole(self, events: Iterable[Event], generation: Generation) -> dict[str, Any]:
        """The whole reply as one response object (after the generation has ended)."""
        for _ in self.pieces(events, generation):
            pass
        return self.response(generation)

    def pieces(self, events: Iterable[Event], generation: Generation) -> Iterator[StreamEvent]:
        """The reply as Responses stream events, from `response.created` to
        `response.completed` (or `response.incomplete`). Each part of the turn is one output
        item: a run of reasoning, a run of answer text, a call."""
        yield self._event("response.created", response=self.response())
        yield self._event("response.in_progress", response=self.response())
        for event in events:
            begun = self._draft.add(event)
            if begun is not None:
                yield from self._close()
            if isinstance(event, ToolCall):
                yield from self._call(event)
            elif isinstance(event, TEXT_EVENTS):
                if begun is not None:
                    yield from self._begin(begun)
                yield self._text(event.text)
        yield from self._close()
        final = self.response(generation)
        yield self._event(f"response.{final['status']}", response=final)

    def _text(self, text: str) -> StreamEvent:
        item = self._open
        assert item is not None
        key = _parts_of(item)
        item[key][0]["text"] += text
        where = {"item_id": item["id"], "output_index": len(self.output)}
        if key == "summary":
            return self._event("response.reasoning_summary_text.delta", **where,
                               summary_index=0, delta=text)  # fmt: skip
        reasoning = item["type"] == "reasoning"
        delta = "reasoning_text" if reasoning else "output_text"
        extra: dict[str, Any] = {} if reasoning else {"logprobs": []}
        return self._event(f"response.{delta}.delta", **where, content_index=0, delta=text,
                           **extra)  # fmt: skip

    def _begin(self, kind: DraftPart) -> Iterator[StreamEvent]:
        at = len(self.output)
        if kind == "reasoning" and self.asked.summarise_reasoning:
            # gpt-oss writes no summary of its reasoning: a client that asks for one (and
            # reads nothing else, as LangChain and pydantic-ai do) gets the reasoning itself.
            part: dict[str, Any] = {"type": "summary_text", "text": ""}
            item = {"id": new_id("rs_"), "type": "reasoning", "summary": [part]}
            self._open = {**item, "status": "in_progress"}
            yield self._event("response.output_item.added", output_index=at,
                              item={**self._open, "summary": []})  # fmt: skip
            yield self._event("response.reasoning_summary_part.added", item_id=item["id"],
                              output_index=at, summary_index=0, part=dict(part))  # fmt: skip
            return
        if kind == "reasoning":
            part = {"type": "reasoning_text", "text": ""}
            item = {"id": new_id("rs_"), "type": "reasoning", "summary": [], "content": [part]}
        else:
            part = {"type": "output_text", "text": "", "annotations": []}
            item = {"id": new_id("msg_"), "type": "message", "role": "assistant",
                    "content": [part]}  # fmt: skip
        self._open = {**item, "status": "in_progress"}
        added = {**self._open, "content": []}  # the part follows in content_part.added
        yield self._event("response.output_item.added", output_index=at, item=added)
        yield self._event("response.content_part.added", item_id=item["id"], output_index=at,
                          content_index=0, part=dict(part))  # fmt: skip

    def _close(self) -> Iterator[StreamEvent]:
        item, self._open = self._open, None
        if item is None:
            return
        key = _parts_of(item)
        at, part = len(self.output), item[key][0]
        item["status"] = "completed"
        if item["type"] == "reasoning" and self.asked.carry_reasoning:
            item["encrypted_content"] = seal(part["text"])
        where = {"item_id": item["id"], "output_index": at}
        if key == "summary":
            yield self._event("response.reasoning_summary_text.done", **where, summary_index=0,
                              text=part["text"])  # fmt: skip
            yield self._event("response.reasoning_summary_part.done", **where, summary_index=0,
                              part=dict(part))  # fmt: skip
        else:
            done = "reasoning_text" if item["type"] == "reasoning" else "output_text"
            extra: dict[str, Any] = {} if item["type"] == "reasoning" else {"logprobs": []}
            yield self._event(f"response.{done}.done", **where, content_index=0,
                              text=part["text"], **extra)  # fmt: skip
            yield self._event("response.content_part.done", **where, content_index=0,
                              part=dict(part))  # fmt: skip
        self.output.append(item)
        yield self._event("response.output_item.done", output_index=at, item=_copy(item))

    def _call(self, call: ToolCall) -> Iterator[StreamEvent]:
        if split_recipient(call.name) in self._freeform:
            kind, prefix, key, text = "custom_tool_call", "ctc_", "input", unwrapped(call.raw)
        else:
            kind, prefix, key, text = "function_call", "fc_", "arguments", call.raw or "{}"
        at, delta = len(self.output), f"{kind}_{key}"  # function_call_arguments, ..._input
        namespace, name = self.asked.names.call(call.name)
        item = {"id": new_id(prefix), "type": kind, "call_id": new_id("call_"), "name": name,
                key: "", "status": "in_progress"}  # fmt: skip
        if namespace != FUNCTIONS:
            item["namespace"] = namespace
        yield self._event("response.output_item.added", output_index=at, item=dict(item))
        yield self._event(f"response.{delta}.delta", item_id=item["id"], output_index=at,
                          delta=text)  # fmt: skip
        yield self._event(f"response.{delta}.done", item_id=item["id"], output_index=at,
                          **{key: text})  # fmt: skip
        item.update({key: text, "status": "completed"})
        self.output.append(item)
        yield self._event("response.output_item.done", output_index=at, item=dict(item))

    def _event(self, kind: str, **fields: Any) -> StreamEvent:
        event = {"type": kind, "sequence_number": self._sequence, **fields}
        self._sequence += 1
        return event


def unwrapped(raw: str) -> str:
    """A freeform call's text as the model wrote it; or, when it wrapped the text in JSON
    anyway (a string literal, or an object of one string value), the text inside."""
    try:
        value = json.loads(raw)
    except ValueError:
        return raw
    if isinstance(value, dict) and len(value) == 1:
        value = next(iter(value.values()))
    return value if isinstance(value, str) else raw


def tools_as_given(tools: Iterable[Tool], names: ToolNames) -> list[dict[str, Any]]:
    """The tools as the request gave them (by the client's names, `names`): functions and
    custom tools, and namespaces holding theirs."""
    out: list[dict[str, Any]] = []
    spaces: dict[str, dict[str, Any]] = {}
    for t in tools:
        given = {**_tool_as_given(t), "name": names.client(t.name)}
        if t.namespace == FUNCTIONS:
            out.append(given)
            continue
        if t.namespace not in spaces:
            name = names.namespaces.client(t.namespace)
            spaces[t.namespace] = {"type": "namespace", "name": name,
                                   "description": t.namespace_description, "tools": []}  # fmt: skip
            out.append(spaces[t.namespace])
        spaces[t.namespace]["tools"].append(given)
    return out


def _tool_as_given(t: Tool) -> dict[str, Any]:
    if t.text_input is None:
        return {"type": "function", "name": t.name, "description": t.description,
                "parameters": t.parameters, "strict": False}  # fmt: skip
    text, form = t.text_input, {"type": "text"}
    if text.syntax != "text":
        form = {"type": "grammar", "syntax": text.syntax, "definition": text.definition}
    return {"type": "custom", "name": t.name, "description": t.description, "format": form}


def _parts_of(item: dict[str, Any]) -> str:
    """Where an open item's text grows: a summarised reasoning item's `summary`, else
    `content`."""
    return "content" if "content" in item else "summary"


def _copy(item: dict[str, Any]) -> dict[str, Any]:
    """An item as it stands now (its text keeps growing in place)."""
    key = _parts_of(item)
    return {**item, key: [dict(part) for part in item[key]]}
