"""A reply in the Messages API's shape: one `message` object, or its stream of events
(`message_start`, per content block `content_block_start`, `content_block_delta` and
`content_block_stop`, then `message_delta` with the stop reason and usage, `message_stop`).

The blocks come in the order the model wrote its turn: thinking (gpt-oss's reasoning, signed
so that it can come back, see `thinking`), text, `tool_use` blocks with the arguments as an
object. The reasoning is never written into a text block. A client that did not ask for
thinking gets no thinking block in a plain answer (the SDKs' `content[0].text` is the answer),
but does in a reply that calls tools: there the reasoning is held back and written just before
the first call, because gpt-oss needs it again while the chain of calls goes on.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from gptoss_local.backends.base import Stats
from gptoss_local.conversation import AssistantDraft
from gptoss_local.events import TEXT_EVENTS, Event, ReasoningDelta, ToolCall
from gptoss_local.serve.anthropic.request import MessagesRequest
from gptoss_local.serve.anthropic.thinking import sign
from gptoss_local.serve.api_request import ApiRequest
from gptoss_local.serve.chat_reply import new_id
from gptoss_local.serve.generation import Generation

Piece = dict[str, Any]
STOP_REASONS = {"tool_calls": "tool_use", "length": "max_tokens", "stop": "end_turn"}


def usage(stats: Stats | None) -> dict[str, int]:
    """Token counts as Anthropic reports them: input tokens apart from those read from the
    cache (the prompt's tokens are their sum)."""
    s = stats or Stats()
    return {"input_tokens": s.prompt_tokens - s.cached_tokens,
            "cache_read_input_tokens": s.cached_tokens, "cache_creation_input_tokens": 0,
            "output_tokens": s.generated_tokens}  # fmt: skip


def stop_reason(generation: Generation) -> str:
    """Why the reply ended, as Anthropic says it."""
    if generation.stop_sequence is not None:
        return "stop_sequence"
    return STOP_REASONS[generation.finish]


class MessagesReply:
    """The reply to one Messages request."""

    def __init__(self, asked: ApiRequest) -> None:
        self.asked = asked
        self.id = new_id("msg_")
        self.content: list[Piece] = []
        self._shown = asked.carry_reasoning  # thinking blocks as they come
        self._omit = isinstance(asked, MessagesRequest) and asked.omit_thinking
        self._held: list[str] = []  # reasoning not shown unless the turn calls a tool
        self._open: Piece | None = None  # the thinking or text block being written

    def message(self, generation: Generation | None = None) -> Piece:
        """The message: as it begins without `generation`, else as it ended."""
        ended = generation is not None
        return {"id": self.id, "type": "message", "role": "assistant", "model": self.asked.model,
                "content": list(self.content) if ended else [],
                "stop_reason": stop_reason(generation) if generation else None,
                "stop_sequence": generation.stop_sequence if generation else None,
                "usage": usage(generation.stats if generation else None)}  # fmt: skip

    def whole(self, events: Iterable[Event], generation: Generation) -> Piece:
        """The whole reply as one message (after the generation has ended)."""
        for _ in self.pieces(events, generation):
            pass
        return self.message(generation)

    def pieces(self, events: Iterable[Event], generation: Generation) -> Iterator[Piece]:
        """The reply as the Messages stream's events."""
        yield {"type": "message_start", "message": self.message()}
        draft = AssistantDraft()
        for event in events:
            begun = draft.add(event)
            if begun is not None:
                yield from self._close()
            if isinstance(event, ToolCall):
                yield from self._thinking_held()
                yield from self._call(event)
            elif isinstance(event, ReasoningDelta) and not self._shown:
                self._held.append(event.text)
            elif isinstance(event, TEXT_EVENTS):
                if begun is not None:
                    yield self._begin("thinking" if begun == "reasoning" else "text")
                yield from self._text(event.text)
        yield from self._close()
        end = self.message(generation)
        delta = {key: end[key] for key in ("stop_reason", "stop_sequence")}
        yield {"type": "message_delta", "delta": delta, "usage": end["usage"]}
        yield {"type": "message_stop"}

    def _begin(self, kind: str) -> Piece:
        block = {"type": kind, kind: ""}
        if kind == "thinking":
            block["signature"] = ""
        self._open = block
        return {"type": "content_block_start", "index": len(self.content),
                "content_block": dict(block)}  # fmt: skip

    def _text(self, text: str) -> Iterator[Piece]:
        block = self._open
        assert block is not None
        kind = block["type"]
        block[kind] += text
        if kind == "thinking" and self._omit:
            return
        delta = {"type": f"{kind}_delta", kind: text}
        yield {"type": "content_block_delta", "index": len(self.content), "delta": delta}

    def _close(self) -> Iterator[Piece]:
        block, self._open = self._open, None
        if block is None:
            return
        at = len(self.content)
        if block["type"] == "thinking":
            block["signature"] = sign(block["thinking"])
            if self._omit:
                block["thinking"] = ""
            delta = {"type": "signature_delta", "signature": block["signature"]}
            yield {"type": "content_block_delta", "index": at, "delta": delta}
        self.content.append(block)
        yield {"type": "content_block_stop", "index": at}

    def _thinking_held(self) -> Iterator[Piece]:
        """The reasoning held back, as one thinking block before the turn's first call."""
        if not self._held:
            return
        text, self._held = "".join(self._held), []
        yield self._begin("thinking")
        yield from self._text(text)
        yield from self._close()

    def _call(self, call: ToolCall) -> Iterator[Piece]:
        arguments = call.arguments if not call.error else {}
        name = self.asked.names.call(call.name)[1]  # the client's name of the tool
        block = {"type": "tool_use", "id": new_id("toolu_"), "name": name, "input": {}}
        at = len(self.content)
        yield {"type": "content_block_start", "index": at, "content_block": dict(block)}
        partial = json.dumps(arguments, ensure_ascii=False)
        yield {"type": "content_block_delta", "index": at,
               "delta": {"type": "input_json_delta", "partial_json": partial}}  # fmt: skip
        self.content.append({**block, "input": arguments})
        yield {"type": "content_block_stop", "index": at}
