"""What a tool call gives back: the text the model reads, and what only the user needs to know."""

from __future__ import annotations

from dataclasses import dataclass

from gptoss_local.tools.truncate import RESULT_CHARS, preview, truncate


@dataclass(frozen=True)
class ToolOutput:
    """The result of one tool call.

    Attributes:
        content: What goes back to the model and into the history (already cut to size).
        error: The call failed (the tool raised, refused the arguments, timed out...).
        truncated: Output was cut to fit (a marker in `content` says how much).
        note: For the user only, never for the model: e.g. that the python tool runs without
            a sandbox here, or that its session was restarted.
    """

    content: str
    error: bool = False
    truncated: bool = False
    note: str = ""

    @classmethod
    def of(
        cls, text: str, *, error: bool = False, note: str = "", limit: int = RESULT_CHARS
    ) -> ToolOutput:
        """A result from whole output, cut to `limit` characters if longer."""
        content, cut = truncate(text, limit)
        return cls(content, error, cut, note)

    def preview(self, lines: int = 12) -> str:
        """The start of the content, for a folded display."""
        return preview(self.content, lines)
