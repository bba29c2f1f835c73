"""A reply in the Chat Completions shape: one `chat.completion` object, or its stream of
`chat.completion.chunk` objects. Reasoning travels apart from the answer, as
`reasoning_content` (llama.cpp's and vLLM's name for it)."""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterable, Iterator
from typing import Any

from gptoss_local.backends.base import Stats
from gptoss_local.events import AnswerDelta, Event, PreambleDelta, ReasoningDelta, ToolCall
from gptoss_local.serve.job import Job
from gptoss_local.serve.turn import Turn


def new_id(prefix: str) -> str:
    """An identifier of a reply or an item: the prefix OpenAI uses and 24 random hex digits."""
    return f"{prefix}{secrets.token_hex(12)}"


def usage(stats: Stats | None) -> dict[str, Any]:
    """Token counts as Chat Completions reports them."""
    s = stats or Stats()
    return {
        "prompt_tokens": s.prompt_tokens,
        "completion_tokens": s.generated_tokens,
        "total_tokens": s.prompt_tokens + s.generated_tokens,
        "prompt_tokens_details": {"cached_tokens": s.cached_tokens},
        "completion_tokens_details": {"reasoning_tokens": s.reasoning_tokens},
    }


def tool_call_json(call: ToolCall, index: int | None = None) -> dict[str, Any]:
    """A tool call; `arguments` is the text the model wrote (a JSON object when well formed)."""
    function = {"name": call.name, "arguments": call.raw or "{}"}
    out: dict[str, Any] = {"id": new_id("call_"), "type": "function", "function": function}
    return out if index is None else {"index": index, **out}


class ChatReply:
    """The reply to one chat completion request."""

    def __init__(self, job: Job) -> None:
        self.job = job
        self.id = new_id("chatcmpl-")
        self.created = int(time.time())

    def completion(self, events: Iterable[Event], turn: Turn) -> dict[str, Any]:
        """The whole reply as one object (after the generation has ended)."""
        reasoning, content, calls = [], [], []
        for event in events:
            if isinstance(event, ReasoningDelta):
                reasoning.append(event.text)
            elif isinstance(event, (AnswerDelta, PreambleDelta)):
                content.append(event.text)
            elif isinstance(event, ToolCall):
                calls.append(tool_call_json(event))
        message: dict[str, Any] = {"role": "assistant", "content": "".join(content) or None}
        if reasoning:
            message["reasoning_content"] = "".join(reasoning)
        if calls:
            message["tool_calls"] = calls
        choice = {"index": 0, "message": message, "finish_reason": turn.finish, "logprobs": None}
        return {**self._head("chat.completion"), "choices": [choice], "usage": usage(turn.stats)}

    def chunks(self, events: Iterable[Event], turn: Turn) -> Iterator[dict[str, Any]]:
        """The reply as stream chunks, the last one (with `include_usage`) carrying usage."""
        yield self._chunk({"role": "assistant", "content": ""})
        calls = 0
        for event in events:
            if isinstance(event, ReasoningDelta):
                yield self._chunk({"reasoning_content": event.text})
            elif isinstance(event, (AnswerDelta, PreambleDelta)):
                yield self._chunk({"content": event.text})
            elif isinstance(event, ToolCall):
                yield self._chunk({"tool_calls": [tool_call_json(event, calls)]})
                calls += 1
        yield self._chunk({}, turn.finish)
        if self.job.include_usage:
            yield {**self._head("chat.completion.chunk"), "choices": [], "usage": usage(turn.stats)}

    def _chunk(self, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
        chunk = {**self._head("chat.completion.chunk"), "choices": [choice]}
        if self.job.include_usage:
            chunk["usage"] = None
        return chunk

    def _head(self, kind: str) -> dict[str, Any]:
        return {"id": self.id, "object": kind, "created": self.created, "model": self.job.model,
                "system_fingerprint": None}  # fmt: skip
