"""Helpers of the session tests: fake clocks, a history opened with them, and a small chat."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from gptoss_local.backends.base import Stats
from gptoss_local.session.history import History

START = dt.datetime(2026, 5, 1, 12, 0, tzinfo=dt.timezone.utc)
STATS = Stats(
    prompt_tokens=120,
    generated_tokens=812,
    reasoning_tokens=300,
    answer_tokens=512,
    ttft_seconds=0.21,
    decode_tokens_per_second=245.3,
    stop_reason="return",
)


class FakeClock:
    """A monotonic clock that moves only when told to."""

    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds


class Ticker:
    """A wall clock that moves one second per reading, so every stored time differs."""

    def __init__(self, start: dt.datetime = START) -> None:
        self.next = start

    def __call__(self) -> dt.datetime:
        now, self.next = self.next, self.next + dt.timedelta(seconds=1)
        return now


def open_history(path: Path | None = None, **options: object) -> tuple[History, FakeClock]:
    """A history with a fake buffer clock and a ticking wall clock."""
    clock = FakeClock()
    history = History(path, clock=clock, now=Ticker(), **options)  # type: ignore[arg-type]
    return history, clock


HEADLINE = "Chat 1 · gpt-oss-20b (llamacpp) · effort high · created 2026-05-01 12:00 UTC"
EXPECTED_MD = f"""\
# Sky colour

{HEADLINE} · updated 2026-05-01 12:00 UTC

> **Instructions**
>
> Be brief.
>
> Use metric units.

## User

Why is the sky blue?

## Assistant

<details><summary>Reasoning</summary>

Rayleigh scattering.

</details>

Because air scatters **blue** light more.

*812 tokens (300 reasoning, 512 answer) · TTFT 0.21 s · 245.3 tokens/s · effort high · complete*
"""


def small_chat(history: History) -> int:
    """Chat "Sky colour": a question and its finished reply (`EXPECTED_MD` as Markdown)."""
    chat = history.create_chat(
        "Sky colour",
        effort="high",
        instructions="Be brief.\n\nUse metric units.",
        model="gpt-oss-20b",
        backend="llamacpp",
    )
    history.add_user_message(chat.id, "Why is the sky blue?")
    reply = history.begin_assistant_message(chat.id)
    history.append_to_assistant(reply.id, reasoning="Rayleigh scattering.")
    history.append_to_assistant(reply.id, answer="Because air scatters **blue** light more.")
    history.finish_assistant(reply.id, STATS)
    return chat.id
