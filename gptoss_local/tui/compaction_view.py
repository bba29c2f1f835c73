"""Where a chat's prompts start now: a marker in the log before the first message they keep.

The messages above it stay in the log and in the history; the model no longer sees them, but
the summary it wrote of them (open the marker to read it), or, without one, nothing. While
the summary is being written a note stands in the log instead, since it takes a while.
"""

from __future__ import annotations

from textual.widgets import Collapsible, Static

from gptoss_local.i18n import _, ngettext
from gptoss_local.session.records import Compaction


def marker_title(compaction: Compaction) -> str:
    """What the compaction did and cost, in one line."""
    count = compaction.messages_left_out
    if not compaction.summary:
        return ngettext(
            "{count} earlier message left out of the prompt (no summary)",
            "{count:,} earlier messages left out of the prompt (no summary)",
            count,
        ).format(count=count)
    head = ngettext(
        "{count} earlier message summarised", "{count:,} earlier messages summarised", count
    ).format(count=count)
    cost = _("prompt {before:,} tokens → summary of {tokens:,} tokens in {seconds:.1f} s").format(
        before=compaction.prompt_tokens_before,
        tokens=compaction.summary_tokens,
        seconds=compaction.seconds,
    )
    return f"{head} · {cost}"


class CompactionMarker(Collapsible):
    """A compaction in the log: its line, and (opened) the summary the model goes on from."""

    DEFAULT_CSS = """
    CompactionMarker {
        margin: 1 0 0 0; border-top: dashed $warning; border-bottom: dashed $warning;
    }
    CompactionMarker .summary { padding: 0 1; color: $text-muted; }
    """

    def __init__(self, compaction: Compaction) -> None:
        summary = compaction.summary or _("The model wrote no summary: the messages above "
                                          "were left out of the prompt.")  # fmt: skip
        super().__init__(Static(summary, markup=False, classes="summary"),
                         title=marker_title(compaction), collapsed=True)  # fmt: skip
        self.compaction = compaction


class CompactingNote(Static):
    """In the log while the model summarises older turns, before the reply starts."""

    DEFAULT_CSS = "CompactingNote { margin: 1 0 0 0; color: $warning; }"

    def __init__(self, messages: int) -> None:
        text = ngettext(
            "The context is nearly full: summarising {count} earlier message to make room…",
            "The context is nearly full: summarising {count:,} earlier messages to make room…",
            messages,
        ).format(count=messages)
        super().__init__(text, markup=False)
