"""What the chat screen attaches to a message: the chips' files and those named as `@path`,
read with the loaded model's tokenizer and refused when larger than the room the chat's policy
leaves (`attachments.AttachmentRefused`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from gptoss_local.attachments import AttachedFile, estimate_tokens, mentions, read_attachment
from gptoss_local.backends.base import BackendInfo, Stats
from gptoss_local.chat.context_budget import Budget
from gptoss_local.kinds import ContextPolicy
from gptoss_local.tui.attachment_widgets import AttachmentChips


def attach_room(
    info: BackendInfo | None, last: Stats | None, effort: str, policy: ContextPolicy, pending: int
) -> int | None:
    """Tokens one more attachment may take: the prompt's limit, less the `pending` tokens of
    those already chosen, less what stays in the prompt whatever is left out (the chat so far
    with "stop", the summary with "compact"). None before the model says its context."""
    if info is None or not info.context_size:
        return None
    budget = Budget(info.context_size, effort)
    if policy == "stop":
        kept = last.context_used if last else 0
    else:
        kept = budget.summary_tokens if policy == "compact" else 0
    return budget.prompt_limit - kept - pending


class Attacher:
    """Reads files for the open chat.

    Args:
        root: The working folder (where `@` paths and the picker start).
        chips: The files chosen for the next message.
        backend: The loaded backend, or None (its tokenizer counts, else an estimate does).
        room: `attach_room` for the chat as it is now.
    """

    def __init__(
        self,
        root: Path,
        chips: AttachmentChips,
        backend: Callable[[], Any],
        room: Callable[[], int | None],
    ) -> None:
        self.root, self.chips, self._backend, self._room = root, chips, backend, room

    def count_tokens(self, text: str) -> int:
        """`text`'s tokens by the loaded model's tokenizer (estimated before it is loaded, or
        with an engine that keeps its tokenizer to itself)."""
        backend = self._backend()
        exact = backend is not None and backend.capabilities.tokenizer
        return len(backend.tokenize(text, False)) if exact else estimate_tokens(text)

    def read(self, path: Path) -> AttachedFile:
        """`path` read for the chat (raises `AttachmentRefused`)."""
        return read_attachment(path, root=self.root, count_tokens=self.count_tokens,
                               room=self._room())  # fmt: skip

    def for_message(self, text: str) -> tuple[AttachedFile, ...]:
        """The chips' files, and those the message names as `@path` that exist (an @word that
        is no path, such as a decorator in pasted code, stays text); each one read is added to
        the chips, so it is shown and kept if the message goes back to the box."""
        chosen = {attached.path: attached for attached in self.chips.attachments}
        for mention in mentions(text):
            path = (self.root / Path(mention).expanduser()).absolute()
            if path.exists() and str(path) not in chosen:
                attached = self.read(path)
                chosen[attached.path] = attached
                self.chips.add(attached)
        return tuple(chosen.values())
