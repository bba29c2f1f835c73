"""One reply's progress token by token: Harmony parsing, counts, why it stopped, its stats.

Shared by the one-sequence loop (`token_loop`) and the loop that decodes several replies
together (`parallel`).
"""

from __future__ import annotations

import time

from gptoss_local.backends.base import Stats, StopReason
from gptoss_local.backends.llamacpp import native
from gptoss_local.backends.llamacpp.structured.gate import Constraint, FinalHeaderWatch
from gptoss_local.events import AnswerDelta, Event, ReasoningDelta
from gptoss_local.harmony import HarmonyStreamParser

_KIND = {"reasoning": "reasoning", "answer": "answer", "preamble": "answer"}
_MARKERS = (b"<|channel|>", b"<|constrain|>")  # control tokens a header goes on after
_RESETS = (b"<|start|>", b"<|end|>")  # those that begin a header afresh


class ReplyProgress:
    """What one reply has generated so far.

    Args:
        pieces: Token ids to bytes, and which are control tokens.
        stops: End-of-generation tokens and the stop reason each means.
        max_tokens: Stop with "length" after this many tokens (None: no limit).
        started: `time.perf_counter()` when the request came.
        constraint: The grammar the reply is held to, if any. One held from the final header
            on (a response format) holds only what follows a final header of control tokens:
            text the parser reads as answer before that (a header the model spelled as text,
            "assistantfinal ...") was never held to the format, so it is reasoning.
    """

    def __init__(
        self,
        pieces: native.PieceCache,
        stops: dict[int, StopReason],
        max_tokens: int | None,
        started: float,
        constraint: Constraint | None = None,
    ) -> None:
        self._pieces = pieces
        self._watch: FinalHeaderWatch | None = None
        if constraint is not None and constraint.from_final:
            self._watch = FinalHeaderWatch(constraint.header, pieces)
        self._held = False  # the final message's content has begun under the grammar
        self._stops = stops
        self._max_tokens = max_tokens
        self.started = started
        self.prefill_done: float | None = None
        self.first: float | None = None
        self.last: float | None = None
        self.generated: list[int] = []
        self.counts = {"reasoning": 0, "answer": 0}
        self._parser = HarmonyStreamParser()
        # Text tokens read as the open header, before its first marker and after: counted once
        # the parser knows whether they were a header or text (the tiny model writes no header).
        self._unread = [0, 0]
        self._marked = False

    def prompt_evaluated(self) -> None:
        """The prompt is in the cache; sampling starts."""
        self.prefill_done = time.perf_counter()

    def ends_with(self, token: int) -> bool:
        """Whether `token`, once fed, ends the reply (an end token, or the token limit)."""
        limit = self._max_tokens
        return token in self._stops or (limit is not None and len(self.generated) + 1 >= limit)

    def feed(self, token: int) -> tuple[list[Event], StopReason | None]:
        """Take a sampled token: the events it completes, and the stop reason if it ends the
        reply (an end token, or the token limit reached)."""
        self.last = time.perf_counter()
        self.first = self.first or self.last
        self.generated.append(token)
        control = self._pieces.is_control(token)
        # Told which tokens are control tokens, the parser keeps ordinary tokens that spell
        # "<|end|>" as text.
        reading, recovered = self._parser.content_kind is None, self._parser.recovered
        piece = self._pieces(token)
        events = self._parser.feed_token(piece, control=control)
        self._count(piece if control else None, reading, recovered, events)
        events = self._unheld(events)
        if self._watch is not None and not self._held:
            self._held = self._watch.feed(token)
        if token in self._stops:
            return events, self._stops[token]
        if self._max_tokens is not None and len(self.generated) >= self._max_tokens:
            return events, "length"
        return events, None

    def finish(self) -> list[Event]:
        """The events the parser still held."""
        recovered = self._parser.recovered
        events = list(self._parser.finish())
        self._credit(recovered)  # a reply cut off in what looked like a header
        return self._unheld(events)

    def _count(
        self, marker: bytes | None, reading: bool, recovered: int, events: list[Event]
    ) -> None:
        """Count the token just fed (`marker`: its piece if a control token; `reading`: the
        parser read a header before it). Headers, control tokens and tool arguments count as
        neither reasoning nor answer."""
        self._credit(recovered)
        kind = self._parser.content_kind
        if marker is None:
            if kind is None:  # text in a header, so far
                self._unread[self._marked] += 1
            elif kind in _KIND:  # not tool arguments
                self.counts[self._counted_as(kind)] += 1
        elif kind is None and marker in _MARKERS:  # a header goes on, or one begins
            self._marked = reading or marker == _MARKERS[0]
        elif kind is None and (marker in _RESETS or not reading):  # a header begins
            self._unread, self._marked = [0, 0], False
        elif kind is not None and reading:  # <|message|>: text before the header is reasoning
            if any(isinstance(event, ReasoningDelta) for event in events):
                self.counts["reasoning"] += self._unread[0]
            self._unread, self._marked = [0, 0], False

    def _credit(self, recovered: int) -> None:
        """Count the tokens read as a header as text, if the parser has read it back as text
        since it counted `recovered` such headers."""
        if self._parser.recovered != recovered:
            self.counts[self._counted_as(self._parser.recovered_kind)] += sum(self._unread)
            self._unread, self._marked = [0, 0], False

    def _counted_as(self, kind: str | None) -> str:
        """What a token of content `kind` counts as: an answer the format's grammar did not
        hold (see the class) is reasoning."""
        counted = _KIND.get(kind or "", "reasoning")
        if counted == "answer" and self._watch is not None and not self._held:
            return "reasoning"
        return counted

    def _unheld(self, events: list[Event]) -> list[Event]:
        """`events`, with an answer the format's grammar did not hold made reasoning."""
        if self._watch is None or self._held:
            return events
        return [ReasoningDelta(e.text) if isinstance(e, AnswerDelta) else e for e in events]

    def stats(
        self, prompt_tokens: int, cached: int, reason: StopReason, context_size: int, used: int
    ) -> Stats:
        """The reply's stats; `used`: the tokens its sequence holds now."""
        now = time.perf_counter()
        sampled = self.first is not None and self.last is not None
        first_at = self.first if self.first is not None else now
        last_at = self.last if self.last is not None else now
        decode_seconds = last_at - first_at
        rate = (len(self.generated) - 1) / decode_seconds if decode_seconds > 0 else None
        prefill_done = self.prefill_done or now
        return Stats(
            prompt_tokens=prompt_tokens,
            cached_tokens=cached,
            evaluated_tokens=prompt_tokens - cached,
            generated_tokens=len(self.generated),
            reasoning_tokens=self.counts["reasoning"],
            answer_tokens=self.counts["answer"],
            prefill_seconds=prefill_done - self.started,
            ttft_seconds=(first_at - self.started) if sampled else None,
            decode_seconds=decode_seconds,
            decode_tokens_per_second=rate,
            stop_reason=reason,
            context_size=context_size,
            context_used=used,
        )
