"""A reply in the Responses API shape: output items (reasoning, message, function_call) in the
order the model wrote them, as one `response` object or as its stream of typed events."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from typing import Any

from gptoss_local.backends.base import Stats
from gptoss_local.events import AnswerDelta, Event, PreambleDelta, ReasoningDelta, ToolCall
from gptoss_local.serve.chat_reply import new_id
from gptoss_local.serve.job import Job
from gptoss_local.serve.turn import Turn

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

    def __init__(self, job: Job) -> None:
        self.job = job
        self.id = new_id("resp_")
        self.created = int(time.time())
        self.output: list[dict[str, Any]] = []
        self._open: dict[str, Any] | None = None  # the reasoning or message item being written
        self._sequence = 0

    def response(self, turn: Turn | None = None) -> dict[str, Any]:
        """The response object: in progress without `turn`, else as it ended."""
        s, c = self.job.request.settings, self.job.request.conversation
        status, details = "in_progress", None
        if turn is not None:
            status = "incomplete" if turn.finish == "length" else "completed"
            details = {"reason": "max_output_tokens"} if status == "incomplete" else None
        return {
            "id": self.id, "object": "response", "created_at": self.created, "status": status,
            "model": self.job.model, "output": list(self.output) if turn else [],
            "usage": usage(turn.stats) if turn else None, "error": None,
            "incomplete_details": details, "instructions": c.instructions,
            "max_output_tokens": s.max_tokens, "temperature": s.temperature, "top_p": s.top_p,
            "reasoning": {"effort": s.effort, "summary": None}, "tool_choice": "auto",
            "tools": [{"type": "function", "name": t.name, "description": t.description,
                       "parameters": t.parameters, "strict": False} for t in c.tools],
            "parallel_tool_calls": False, "store": False, "text": {"format": {"type": "text"}},
            "metadata": {},
        }  # fmt: skip

    def complete(self, events: Iterable[Event], turn: Turn) -> dict[str, Any]:
        """The whole reply as one response object (after the generation has ended)."""
        for _ in self.stream(events, turn):
            pass
        return self.response(turn)

    def stream(self, events: Iterable[Event], turn: Turn) -> Iterator[StreamEvent]:
        """The reply as Responses stream events, from `response.created` to
        `response.completed` (or `response.incomplete`)."""
        yield self._event("response.created", response=self.response())
        yield self._event("response.in_progress", response=self.response())
        for event in events:
            if isinstance(event, ReasoningDelta):
                yield from self._text("reasoning", event.text)
            elif isinstance(event, (AnswerDelta, PreambleDelta)):
                yield from self._text("message", event.text)
            elif isinstance(event, ToolCall):
                yield from self._close()
                yield from self._call(event)
        yield from self._close()
        final = self.response(turn)
        yield self._event(f"response.{final['status']}", response=final)

    def _text(self, kind: str, text: str) -> Iterator[StreamEvent]:
        if self._open is None or self._open["type"] != kind:
            yield from self._close()
            yield from self._begin(kind)
        item = self._open
        assert item is not None
        item["content"][0]["text"] += text
        delta = "reasoning_text" if kind == "reasoning" else "output_text"
        extra: dict[str, Any] = {} if kind == "reasoning" else {"logprobs": []}
        yield self._event(f"response.{delta}.delta", item_id=item["id"], output_index=
                          len(self.output), content_index=0, delta=text, **extra)  # fmt: skip

    def _begin(self, kind: str) -> Iterator[StreamEvent]:
        if kind == "reasoning":
            part: dict[str, Any] = {"type": "reasoning_text", "text": ""}
            item = {"id": new_id("rs_"), "type": "reasoning", "summary": [], "content": [part]}
        else:
            part = {"type": "output_text", "text": "", "annotations": []}
            item = {"id": new_id("msg_"), "type": "message", "role": "assistant",
                    "content": [part]}  # fmt: skip
        self._open = {**item, "status": "in_progress"}
        at = len(self.output)
        added = {**self._open, "content": []}  # the part follows in content_part.added
        yield self._event("response.output_item.added", output_index=at, item=added)
        yield self._event("response.content_part.added", item_id=item["id"], output_index=at,
                          content_index=0, part=dict(part))  # fmt: skip

    def _close(self) -> Iterator[StreamEvent]:
        item, self._open = self._open, None
        if item is None:
            return
        at, part = len(self.output), item["content"][0]
        item["status"] = "completed"
        done = "reasoning_text" if item["type"] == "reasoning" else "output_text"
        extra: dict[str, Any] = {} if item["type"] == "reasoning" else {"logprobs": []}
        yield self._event(f"response.{done}.done", item_id=item["id"], output_index=at,
                          content_index=0, text=part["text"], **extra)  # fmt: skip
        yield self._event("response.content_part.done", item_id=item["id"], output_index=at,
                          content_index=0, part=dict(part))  # fmt: skip
        self.output.append(item)
        yield self._event("response.output_item.done", output_index=at, item=_copy(item))

    def _call(self, call: ToolCall) -> Iterator[StreamEvent]:
        at, arguments = len(self.output), call.raw or "{}"
        item = {"id": new_id("fc_"), "type": "function_call", "call_id": new_id("call_"),
                "name": call.name, "arguments": "", "status": "in_progress"}  # fmt: skip
        yield self._event("response.output_item.added", output_index=at, item=dict(item))
        yield self._event("response.function_call_arguments.delta", item_id=item["id"],
                          output_index=at, delta=arguments)  # fmt: skip
        yield self._event("response.function_call_arguments.done", item_id=item["id"],
                          output_index=at, arguments=arguments)  # fmt: skip
        item.update(arguments=arguments, status="completed")
        self.output.append(item)
        yield self._event("response.output_item.done", output_index=at, item=dict(item))

    def _event(self, kind: str, **fields: Any) -> StreamEvent:
        event = {"type": kind, "sequence_number": self._sequence, **fields}
        self._sequence += 1
        return event


def _copy(item: dict[str, Any]) -> dict[str, Any]:
    """An item as it stands now (its text keeps growing in place)."""
    return {**item, "content": [dict(part) for part in item["content"]]}
