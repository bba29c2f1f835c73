"""Files and folders attached to a chat message, inlined as text for gpt-oss.

`read_attachment` turns a path into an `AttachedFile` (or refuses it with
`AttachmentRefused`), `with_attachments` writes the message the model reads, and
`complete_path` / `mentions` serve the "@path" syntax of the chat box. Plain Python: the TUI
and the `run` command build on it.
"""

from __future__ import annotations

from gptoss_local.attachments.completion import as_mention, complete_path, mentions
from gptoss_local.attachments.message import estimate_tokens, with_attachments
from gptoss_local.attachments.model import MAX_FILE_BYTES, AttachedFile, AttachmentRefused
from gptoss_local.attachments.reading import display_name, read_attachment

__all__ = [
    "MAX_FILE_BYTES",
    "AttachedFile",
    "AttachmentRefused",
    "as_mention",
    "complete_path",
    "display_name",
    "estimate_tokens",
    "mentions",
    "read_attachment",
    "with_attachments",
]
