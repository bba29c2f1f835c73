"""Stop strings, applied to the answer as it streams (the engines stop on tokens only)."""

from __future__ import annotations


class StopFilter:
    """Passes answer text on until one of `stops` appears; what follows it is never sent.

    Text that could be the start of a stop string is held back until the next piece shows
    whether it is one; `flush()` releases it when the answer ends without a match.
    """

    def __init__(self, stops: tuple[str, ...]) -> None:
        self.stops = stops
        self.hold = max((len(s) for s in stops), default=1) - 1
        self.matched = False
        self.found: str | None = None  # the stop string that matched
        self._pending = ""

    def feed(self, text: str) -> str:
        """The part of `text` (after what was held back) that is safe to send now."""
        if self.matched:
            return ""
        if not self.stops:
            return text
        buffer = self._pending + text
        found = [(i, s) for i, s in ((buffer.find(s), s) for s in self.stops) if i >= 0]
        if found:
            cut, self.found = min(found, key=lambda pair: pair[0])
            self.matched, self._pending = True, ""
            return buffer[:cut]
        keep = self._held(buffer)
        self._pending = buffer[len(buffer) - keep :]
        return buffer[: len(buffer) - keep]

    def flush(self) -> str:
        """What was held back, once the answer has ended without a stop string."""
        rest, self._pending = self._pending, ""
        return "" if self.matched else rest

    def _held(self, buffer: str) -> int:
        """How much of the end of `buffer` could begin a stop string."""
        for size in range(min(self.hold, len(buffer)), 0, -1):
            tail = buffer[-size:]
            if any(stop.startswith(tail) for stop in self.stops):
                return size
        return 0
