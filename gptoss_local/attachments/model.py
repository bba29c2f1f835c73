"""What an attached file becomes: `AttachedFile`, the text the model reads for it, and the
refusal raised when a path cannot be attached.

gpt-oss reads text only, and no engine renders `conversation.Attachment` yet, so an attachment
is inlined into the user's message as text (`message.with_attachments`). The class is not
named `Attachment`: that name is the conversation's (a file that goes with a message, for
engines that take files), and this is the file already turned into text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gptoss_local.errors import UserError
from gptoss_local.units import MIB

Kind = Literal["text", "pdf", "folder"]
# Refused before reading: a bigger file would not fit any context gpt-oss has (128k tokens is
# about half a megabyte of text), and reading and counting it would stall the chat.
MAX_FILE_BYTES = 20 * MIB


@dataclass(frozen=True)
class AttachedFile:
    """A file or folder read for the chat, as the model will see it.

    Attributes:
        name: Shown on the chip and in the block header: the path relative to the working
            folder when inside it, else the absolute path.
        path: The absolute path that was read.
        sha256: Hex digest of the file's bytes; for a folder, of `text` (UTF-8).
        kind: "text", "pdf" or "folder".
        text: Exactly what goes to the model for this attachment.
        tokens: Tokens of `text` by the counter given when it was read.
    """

    name: str
    path: str
    sha256: str
    kind: Kind
    text: str
    tokens: int


class AttachmentRefused(UserError):
    """A path that cannot be attached: missing, unreadable, binary, an image, an encrypted or
    scanned PDF, too large, or more tokens than the context has room for. The message names
    the path and says which; the hint, when there is one, what to do instead."""
