"""Text deltas joined before they are written, for our own client over the shared engine.

Each streamed event costs the engine a JSON chunk and a socket write, and the client a read and
a parse: ~0.1 ms a token together, which on a fast model is several per cent of its speed (and
on two cores takes CPU from the decode itself). Our client (the chat, `run`, `bench` over the
engine) shows text at most five times a second, so text that comes within `WINDOW_SECONDS` of
the last text sent waits and goes out with the next: the first text of a reply is never held
(time to first token stays), and a slow model's tokens still go out one by one.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator

from gptoss_local.events import TEXT_EVENTS, Event

WINDOW_SECONDS = 0.02  # a 50-token/s stream is untouched; a 1,000-token/s one goes out 20 at once


def coalesced(
    events: Iterable[Event],
    window: float = WINDOW_SECONDS,
    clock: Callable[[], float] = time.monotonic,
) -> Iterator[Event]:
    """`events`, with consecutive text of one kind joined while it comes within `window`
    seconds of the text last sent; any other event sends the waiting text first."""
    waiting: Event | None = None
    sent_at: float | None = None
    for event in events:
        if not isinstance(event, TEXT_EVENTS):
            if waiting is not None:
                yield waiting
                waiting, sent_at = None, clock()
            yield event
            continue
        if waiting is not None and type(waiting) is not type(event):
            yield waiting  # another kind of text: what waits goes first, as it came
            waiting, sent_at = None, clock()
        waiting = event if waiting is None else type(event)(waiting.text + event.text)
        now = clock()
        if sent_at is None or now - sent_at >= window:
            yield waiting
            waiting, sent_at = None, now
    if waiting is not None:
        yield waiting
