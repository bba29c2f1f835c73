"""The files going with the next message: the chips above the input box, the file picker (read
on a thread worker: a PDF or a folder takes a moment), the `@path`s the message names, read as
it is sent, and the files of a message taken back, put back with it.

What is read, and refused when larger than the room left, is `attaching.Attacher`'s; the chips
are `attachment_widgets.AttachmentChips`. The screen owns the input box and the key (Ctrl+G).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.screen import Screen

from gptoss_local.attachments import AttachedFile, AttachmentRefused
from gptoss_local.chat.services import ChatServices
from gptoss_local.i18n import _
from gptoss_local.session.records import StoredMessage
from gptoss_local.tui.attaching import Attacher, attach_room
from gptoss_local.tui.attachment_widgets import AttachmentChips
from gptoss_local.tui.file_picker import FilePickerScreen
from gptoss_local.tui.status import StatusBar


class AttachmentBar:
    """The attachments of the next message.

    Args:
        screen: The chat screen (it shows the picker and the refusals, and runs the reads).
        services: The chat's services (the working folder, the open chat's effort, the policy).
        status: The status bar, whose model and last figures say the room left.
        backend: The loaded backend, or None (its tokenizer counts, else an estimate does).
    """

    def __init__(
        self,
        screen: Screen[Any],
        services: ChatServices,
        status: StatusBar,
        backend: Callable[[], Any],
    ) -> None:
        self.screen, self.services, self.status = screen, services, status
        self.chips = AttachmentChips(id="chips")
        self.attacher = Attacher(services.root, self.chips, backend, self.room)

    def room(self) -> int | None:
        """Tokens one more attachment may take (`attaching.attach_room`), None before the model
        says its context."""
        status, services = self.status, self.services
        return attach_room(status.info, status.stats, services.state.effort,
                           services.context_policy, self.chips.total_tokens)  # fmt: skip

    def pick(self) -> None:
        """Ask for a file or folder to attach, starting in the working folder."""
        self.screen.app.push_screen(FilePickerScreen(self.services.root), self._picked)

    def _picked(self, path: Path | None) -> None:
        if path is not None:
            self.screen.run_worker(lambda: self._read(path), thread=True, group="attach",
                                   exit_on_error=False)  # fmt: skip

    def _read(self, path: Path) -> None:  # on a worker
        app = self.screen.app
        try:
            attached = self.attacher.read(path)
        except AttachmentRefused as exc:
            app.call_from_thread(self._refused, exc)
            return
        app.call_from_thread(self.chips.add, attached)

    def for_message(self, text: str) -> tuple[AttachedFile, ...] | None:
        """The files going with `text` (the chips' and its `@path`s); None when one is refused
        (said so: the text and the chips stay, to fix and send again)."""
        try:
            return self.attacher.for_message(text)
        except AttachmentRefused as exc:
            self._refused(exc)
            return None

    def _refused(self, exc: AttachmentRefused) -> None:
        self.screen.notify(str(exc), title=_("Cannot attach"), severity="error", timeout=15,
                           markup=False)  # fmt: skip

    def restore(self, sent: StoredMessage) -> None:
        """Put a taken-back message's files back with the input box (to send again)."""
        for attached in sent.attachments:
            self.chips.add(attached)

    def clear(self) -> None:
        """Drop every pending file (the message that carried them was sent)."""
        self.chips.clear()
