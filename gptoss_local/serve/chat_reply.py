"""A reply in the Chat Completions shape: one `chat.completion` object, or its stream of
`chat.completion.chunk` objects. Reasoning travels apart from the answer, as
`reasoning_content` (llama.cpp's and vLLM's name for it)."""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterable, Iterator
from typing import Any

from gptoss_local.backends.base import Stats
from gptoss_local.conversation import AssistantDraft
from gptoss_local.events import AnswerDelta, Event, PreambleDelta, ReasoningDelta, ToolCall
from gptoss_local.harmony.names import ToolNames
from gptoss_local.serve.api_request import ApiRequest
from gptoss_local.serve.coalesce import coalesced
from gptoss_local.serve.generation import Generation
from gptoss_local.urls import OURS_FIELD


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


# The engine's own figures of a reply, which our client takes over its clock's (`ours`).
ENGINE_STATS = (
    "prompt_tokens", "cached_tokens", "evaluated_tokens", "generated_tokens",
    "prefill_seconds", "decode_seconds", "decode_tokens_per_second", "ttft_seconds",
)  # fmt: skip


def engine_stats(stats: Stats | None) -> dict[str, Any]:
    """What the engine measured of a reply, for our own client (`bench` over the engine)."""
    s = stats or Stats()
    return {name: getattr(s, name) for name in ENGINE_STATS}


def tool_call_json(
    call: ToolCall, names: ToolNames, index: int | None = None, ours: bool = False
) -> dict[str, Any]:
    """A tool call, by the client's name of its tool (`names`); `arguments` is the text the
    model wrote (a JSON object when well formed). To our own client (`ours`) the text as it is
    (python's code too) and the call's channel, so it makes the very `ToolCall` the engine's
    parser made."""
    arguments = call.raw if ours else call.raw or "{}"
    function = {"name": names.called(call.name), "arguments": arguments}
    out: dict[str, Any] = {"id": new_id("call_"), "type": "function", "function": function}
    if ours:
        out[OURS_FIELD] = {"channel": call.channel}
    return out if index is None else {"index": index, **out}


class ChatReply:
    """The reply to one chat completion request."""

    def __init__(self, asked: ApiRequest) -> None:
        self.asked = asked
        self.id = new_id("chatcmpl-")
        self.created = int(time.time())

    def whole(self, events: Iterable[Event], generation: Generation) -> dict[str, Any]:
        """The whole reply as one `chat.completion` object (after the generation has ended)."""
        draft = AssistantDraft()
        for event in events:
            draft.add(event)
        message: dict[str, Any] = {"role": "assistant", "content": draft.content or None}
        if draft.reasoning:
            message["reasoning_content"] = draft.reasoning
        if draft.calls:
            names, ours = self.asked.names, self.asked.ours
            message["tool_calls"] = [tool_call_json(c, names, None, ours) for c in draft.calls]
        finish = generation.finish
        choice = {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
        head = self._head("chat.completion")
        return {**head, "choices": [choice], **self._usage(generation)}

    def pieces(self, events: Iterable[Event], generation: Generation) -> Iterator[dict[str, Any]]:
        """The reply as stream chunks, the last one (with `include_usage`) carrying usage."""
        yield self._chunk({"role": "assistant", "content": ""})
        calls = 0
        for event in coalesced(events) if self.asked.ours else events:
            if isinstance(event, ReasoningDelta):
                yield self._chunk({"reasoning_content": event.text})
            elif isinstance(event, (AnswerDelta, PreambleDelta)):
                yield self._chunk({"content": event.text})
            elif isinstance(event, ToolCall):
                call = tool_call_json(event, self.asked.names, calls, self.asked.ours)
                yield self._chunk({"tool_calls": [call]})
                calls += 1
        yield self._chunk({}, generation.finish)
        if self.asked.include_usage:
            last = {**self._head("chat.completion.chunk"), "choices": []}
            yield {**last, **self._usage(generation)}

    def _usage(self, generation: Generation) -> dict[str, Any]:
        """`usage`, and for our own client the engine's figures beside it."""
        fields: dict[str, Any] = {"usage": usage(generation.stats)}
        if self.asked.ours:
            fields[OURS_FIELD] = {"stats": engine_stats(generation.stats)}
        return fields

    def _chunk(self, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
        chunk = {**self._head("chat.completion.chunk"), "choices": [choice]}
        if self.asked.include_usage:
            chunk["usage"] = None
        return chunk

    def _head(self, kind: str) -> dict[str, Any]:
        return {"id": self.id, "object": kind, "created": self.created, "model": self.asked.model,
                "system_fingerprint": None}  # fmt: skip
