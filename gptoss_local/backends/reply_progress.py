"""One reply's progress token by token: Harmony parsing, counts, why it stopped, its stats.

Shared by the one-sequence loop (`token_loop`) and the loop that decodes several replies
together (`parallel`).
"""

from __future__ import annotations

import time

from gptoss_local.backends import llama_native as native
from gptoss_local.backends.base import Stats, StopReason
from gptoss_local.backends.structured.gate import Constraint, FinalHeaderWatch
from gptoss_local.events import AnswerDelta, Event, ReasoningDelta
from gptoss_local.harmony import HarmonyStreamParser

_KIND = {"reasoning": "reasoning", "answer": "answer", "preamble": "answer"}


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
        events = self._unheld(self._parser.feed_token(self._pieces(token), control=control))
        kind = _KIND.get(self._parser.content_kind or "")
        if kind == "answer" and self._watch is not None and not self._held:
            kind = "reasoning"  # an answer the format's grammar did not hold (see above)
        if kind and not control:  # headers, control tokens and tool arguments count as neither
            self.counts[kind] += 1
        if self._watch is not None and not self._held:
            self._held = self._watch.feed(token)
        if token in self._stops:
            return events, self._stops[token]
        if self._max_tokens is not None and len(self.generated) >= self._max_tokens:
            return events, "length"
        return events, None

    def finish(self) -> list[Event]:
        """The events the parser still held."""
        return self._unheld(self._parser.finish())

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
