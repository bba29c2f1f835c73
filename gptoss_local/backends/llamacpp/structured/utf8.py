"""Whether bytes so far can still be well-formed UTF-8.

llama.cpp's grammar decodes a token's bytes to code points as it goes, leniently: a lead byte
F5 to FF, an overlong form (C0 80, E0 80 ..) or a surrogate (ED A0 ..) gives it a code point
that a JSON string may hold, while the text that comes out is not UTF-8 and turns into U+FFFD
(a string of 8 characters became one of 11, past its maxLength). The random test model writes
such bytes at once; gpt-oss hardly ever. `Utf8Prefix` follows the Unicode standard's table of
well-formed byte sequences (Table 3-7) byte by byte, so a token that leads nowhere valid is
refused when it is sampled, not three tokens later when no continuation could save it.
"""

from __future__ import annotations

# Per lead byte: how many continuation bytes follow, and the range the first of them takes.
_LEADS: dict[int, tuple[int, int, int]] = {}
for _lead in range(0xC2, 0xE0):
    _LEADS[_lead] = (1, 0x80, 0xBF)
for _lead in range(0xE0, 0xF0):
    _LEADS[_lead] = (2, 0x80, 0xBF)
_LEADS[0xE0], _LEADS[0xED] = (2, 0xA0, 0xBF), (2, 0x80, 0x9F)
for _lead in range(0xF0, 0xF5):
    _LEADS[_lead] = (3, 0x80, 0xBF)
_LEADS[0xF0], _LEADS[0xF4] = (3, 0x90, 0xBF), (3, 0x80, 0x8F)


class Utf8Prefix:
    """The state of a byte stream that is well-formed UTF-8 so far."""

    def __init__(self) -> None:
        self.remaining = 0  # continuation bytes the open character still needs
        self.low, self.high = 0x80, 0xBF  # the range of the next continuation byte

    def reset(self) -> None:
        self.remaining, self.low, self.high = 0, 0x80, 0xBF

    def extends(self, data: bytes) -> bool:
        """Whether the stream followed by `data` can still be well-formed (nothing changes)."""
        return self._run(data) is not None

    def take(self, data: bytes) -> None:
        """Append `data` (checked with `extends` first)."""
        state = self._run(data)
        if state is not None:
            self.remaining, self.low, self.high = state

    def _run(self, data: bytes) -> tuple[int, int, int] | None:
        remaining, low, high = self.remaining, self.low, self.high
        for byte in data:
            if remaining:
                if not low <= byte <= high:
                    return None
                remaining, low, high = remaining - 1, 0x80, 0xBF
            elif byte >= 0x80:
                lead = _LEADS.get(byte)
                if lead is None:
                    return None
                remaining, low, high = lead
        return remaining, low, high
