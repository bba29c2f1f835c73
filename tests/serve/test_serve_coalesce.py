"""Text deltas joined for our own client (`serve.coalesce`): the first text goes at once, text
within the window waits for the next, other events and another kind of text send what waits
first, and nothing is lost or reordered; a client that is not ours gets a chunk a token."""

from __future__ import annotations

from collections.abc import Iterator

from gptoss_local.events import AnswerDelta, Event, ReasoningDelta, ToolCall, TurnEnded
from gptoss_local.serve.coalesce import coalesced


class Clock:
    """Time that moves only when the test says (a step a call)."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def _tokens(kind: type, count: int) -> Iterator[Event]:
    for i in range(count):
        yield kind(f"t{i} ")


def test_fast_text_goes_out_first_alone_then_in_joined_pieces() -> None:
    clock = Clock(0.001)  # a token a millisecond: 1,000 tokens/s
    out = list(coalesced(_tokens(AnswerDelta, 100), window=0.02, clock=clock))
    assert out[0] == AnswerDelta("t0 ")  # the first text is never held
    assert 3 <= len(out) <= 10
    assert "".join(e.text for e in out if isinstance(e, AnswerDelta)) == "".join(
        f"t{i} " for i in range(100)
    )


def test_slow_text_goes_out_token_by_token() -> None:
    clock = Clock(0.05)  # slower than the window: nothing waits
    events = list(_tokens(AnswerDelta, 10))
    assert list(coalesced(events, window=0.02, clock=clock)) == events


def test_other_events_and_another_kind_send_what_waits_first() -> None:
    call = ToolCall("f", {}, "{}")
    events = [ReasoningDelta("a"), ReasoningDelta("b"), ReasoningDelta("c"),
              AnswerDelta("d"), AnswerDelta("e"), call, AnswerDelta("f"),
              TurnEnded("return")]  # fmt: skip
    out = list(coalesced(events, window=10.0, clock=Clock(0.001)))
    assert out == [ReasoningDelta("a"), ReasoningDelta("bc"), AnswerDelta("de"), call,
                   AnswerDelta("f"), TurnEnded("return")]  # fmt: skip
