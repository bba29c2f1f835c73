"""Attachments in the chat: chips for those waiting to be sent (a row above the input), and the
list of those a sent message carried (under it in the log).

A chip is a widget of its own so that it can take the focus: Delete or Backspace removes it, and
so does a click on its ✕. Textual has no wrapping layout, so the row places its chips itself, at
absolute offsets worked out again when they change, when the row is resized and when the focus
moves: one line, a second when they do not fit, and no more. The second line slides sideways to
keep the focused chip in view, so the input never loses more than two lines to attachments.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.cells import cell_len
from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static

from gptoss_local.attachments.model import AttachedFile
from gptoss_local.i18n import _

ICONS = {"text": "📄", "pdf": "📕", "folder": "📁"}
NAME_CELLS = 40  # a longer name is cut in the middle: its start and its extension both matter
CLOSE = " ✕"
GAP = 1  # cells between two chips
PADDING = 2  # a chip's padding, left and right


def attachment_label(attachment: AttachedFile) -> str:
    """What a chip, and a sent message's list, show of an attachment: '📄 notes.md · 1,234 tok'."""
    icon = ICONS.get(attachment.kind, ICONS["text"])
    name = short_name(attachment.name)
    return _("{icon} {name} · {tokens} tok").format(
        icon=icon, name=name, tokens=f"{attachment.tokens:,}"
    )


def short_name(name: str, cells: int = NAME_CELLS) -> str:
    """`name`, cut in the middle with '…' when it is wider than `cells`."""
    if cell_len(name) <= cells:
        return name
    head, tail = name[: cells // 2], name[-(cells - cells // 2 - 1) :]
    return f"{head}…{tail}"


def place_chips(widths: Sequence[int], room: int, focused: int | None) -> list[tuple[int, int]]:
    """Where chips of these `widths` go in a row `room` cells wide: (x, line) each.

    They fill the first line, then the second; those that do not fit on the second line
    either lie past its right edge, unless the `focused` one (an index) is among them: then
    the whole second line slides left so that it shows.
    """
    places: list[tuple[int, int]] = []
    x, line = 0, 0
    for width in widths:
        if line == 0 and x > 0 and x + width > room:
            x, line = 0, 1
        places.append((x, line))
        x += width + GAP
    if focused is not None and places[focused][1] == 1:
        overflow = places[focused][0] + widths[focused] - room
        if overflow > 0:
            places = [(x - overflow, 1) if line else (x, 0) for x, line in places]
    return places


class AttachmentChip(Static, can_focus=True):
    """One pending attachment: '📄 name · 1,234 tok ✕'. Delete, Backspace or a click on ✕
    removes it; Left and Right move to the chip beside it."""

    DEFAULT_CSS = """
    AttachmentChip {
        position: absolute; height: 1; padding: 0 1; background: $boost; color: $text;
    }
    AttachmentChip:hover { background: $primary 20%; }
    AttachmentChip:focus { background: $primary 50%; text-style: bold; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("delete,backspace", "remove_chip", _("Remove"), id="chip_remove"),
        Binding("left", "step(-1)", _("Previous"), show=False, id="chip_previous"),
        Binding("right", "step(1)", _("Next"), show=False, id="chip_next"),
    ]

    def __init__(self, attachment: AttachedFile) -> None:
        super().__init__(markup=False)
        self.show(attachment)

    def show(self, attachment: AttachedFile) -> None:
        """Show `attachment` (a new one for the same path replaces the old)."""
        self.attachment = attachment
        self.text = attachment_label(attachment) + CLOSE
        self.update(self.text)
        self.styles.width = self.cells

    @property
    def cells(self) -> int:
        """How wide the chip is, padding included."""
        return cell_len(self.text) + PADDING

    def action_remove_chip(self) -> None:
        """Remove this attachment."""
        self.query_ancestor(AttachmentChips).discard(self.attachment.path)

    def action_step(self, step: int) -> None:
        """Focus the chip `step` places away, if there is one."""
        self.query_ancestor(AttachmentChips).focus_beside(self, step)

    def on_click(self, event: events.Click) -> None:
        # The ✕ is the last cell before the right padding; the space before it counts too.
        if event.x >= self.size.width - cell_len(CLOSE) - PADDING // 2:
            event.stop()
            self.action_remove_chip()

    def on_focus(self) -> None:
        self.query_ancestor(AttachmentChips).place()  # the second line may need to slide


class AttachmentChips(Widget):
    """The attachments waiting to go with the next message, as chips above the input; hidden
    when there are none. Posts `Changed` whenever one is added, replaced or removed."""

    DEFAULT_CSS = """
    AttachmentChips { height: 1; margin: 0 1; padding: 0 1; overflow: hidden hidden; }
    """

    @dataclass
    class Changed(Message):
        """The pending attachments changed: `attachments` are those pending after the change."""

        chips: AttachmentChips
        attachments: tuple[AttachedFile, ...]

        @property
        def control(self) -> AttachmentChips:
            """The row that changed (for `@on(AttachmentChips.Changed, "#id")`)."""
            return self.chips

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.display = False
        # The chips in order, kept here: a removed widget stays a child until Textual prunes it.
        self._chips: list[AttachmentChip] = []

    @property
    def attachments(self) -> tuple[AttachedFile, ...]:
        """The pending attachments, in the order they were added."""
        return tuple(chip.attachment for chip in self._chips)

    @property
    def total_tokens(self) -> int:
        """The tokens all the pending attachments will take in the prompt."""
        return sum(chip.attachment.tokens for chip in self._chips)

    def add(self, attachment: AttachedFile) -> None:
        """Add `attachment`; one already there for the same path is replaced, in its place."""
        chip = self._chip_of(attachment.path)
        if chip is not None:
            chip.show(attachment)
        else:
            chip = AttachmentChip(attachment)
            self._chips.append(chip)
            self.mount(chip)
        self._changed()

    def discard(self, path: str) -> bool:
        """Remove the attachment of `path`; whether there was one. A focused chip hands the
        focus to the one that takes its place (else the one before it)."""
        chip = self._chip_of(path)
        if chip is None:
            return False
        index = self._chips.index(chip)
        self._chips.remove(chip)
        if chip.has_focus and self._chips:
            self._chips[min(index, len(self._chips) - 1)].focus()
        chip.remove()
        self._changed()
        return True

    def clear(self) -> None:
        """Remove every attachment (the message that carried them was sent)."""
        if self._chips:
            self._chips.clear()
            self.remove_children(AttachmentChip)
            self._changed()

    def focus_beside(self, chip: AttachmentChip, step: int) -> None:
        """Focus the chip `step` places from `chip`, if there is one."""
        index = self._chips.index(chip) + step
        if 0 <= index < len(self._chips):
            self._chips[index].focus()

    def place(self) -> None:
        """Put the chips where they go at the row's width, on one line or two."""
        self.display = bool(self._chips)
        if not self._chips:
            return
        focused = next((i for i, chip in enumerate(self._chips) if chip.has_focus), None)
        room = max(self.content_size.width, 1)
        places = place_chips([chip.cells for chip in self._chips], room, focused)
        for chip, (x, line) in zip(self._chips, places, strict=True):
            chip.styles.offset = (x, line)
        self.styles.height = 1 + max(line for _x, line in places)

    def on_resize(self) -> None:
        self.place()

    def _chip_of(self, path: str) -> AttachmentChip | None:
        return next((chip for chip in self._chips if chip.attachment.path == path), None)

    def _changed(self) -> None:
        self.place()
        self.post_message(self.Changed(self, self.attachments))


class AttachmentList(Static):
    """The attachments a sent message carried, one a line under it in the log (read-only)."""

    DEFAULT_CSS = """
    AttachmentList { padding: 0 1; background: $boost; color: $text-muted; }
    """

    def __init__(self, attachments: Sequence[AttachedFile], *, id: str | None = None) -> None:
        self.attachments = tuple(attachments)
        lines = (attachment_label(attachment) for attachment in self.attachments)
        super().__init__("\n".join(lines), markup=False, id=id)
