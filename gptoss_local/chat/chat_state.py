"""Which chat is open and what belongs to it before the history has it.

A new chat exists only on screen until its first message: then it is created in the history
with the effort and instructions chosen so far. The message being edited (Ctrl+L) is deleted,
with what followed it, only when its replacement is sent. Every method may raise `HistoryError`
(the file damaged, the disk full); the UI shows it and keeps the user's text.
"""

from __future__ import annotations

from collections.abc import Sequence

from gptoss_local.attachments.model import AttachedFile
from gptoss_local.backends.base import BackendInfo
from gptoss_local.conversation import Conversation
from gptoss_local.kinds import EFFORTS, Effort
from gptoss_local.session.history import History
from gptoss_local.session.records import Compaction, StoredMessage


class ChatState:
    """The open chat: its id (None: a new one), effort, unsaved instructions and edit.

    Args:
        history: Where chats are kept.
        chat_id: A saved chat to open; None starts a new one.
        effort: The reasoning effort of a new chat (a saved one has its own: `load_effort`).
    """

    def __init__(self, history: History, chat_id: int | None, effort: Effort) -> None:
        self.history = history
        self.chat_id = chat_id
        self.effort = effort
        self.instructions = ""  # of a new chat, until its first message saves it
        self.editing: int | None = None  # the user message being edited, until sent or Esc
        self.sent: StoredMessage | None = None  # the last message sent, until its reply starts

    def switch(self, chat_id: int | None) -> None:
        """Open chat `chat_id` (None: a new one), dropping any edit and unsaved instructions."""
        self.chat_id, self.instructions, self.editing = chat_id, "", None

    def messages(self) -> list[StoredMessage]:
        """The open chat's messages (none in a new chat)."""
        return [] if self.chat_id is None else self.history.messages(self.chat_id)

    def compactions(self) -> list[Compaction]:
        """The open chat's compactions (none in a new chat)."""
        return [] if self.chat_id is None else self.history.compactions(self.chat_id)

    def load_effort(self) -> None:
        """Take the saved chat's effort (a new chat keeps the current one)."""
        if self.chat_id is not None:
            self.effort = self.history.get_chat(self.chat_id).effort

    def title(self) -> str:
        """The open chat's title ("" for a new chat or one without a title yet)."""
        return self.history.get_chat(self.chat_id).title if self.chat_id is not None else ""

    def cycle_effort(self) -> str:
        """Switch to the next reasoning effort, stored with a saved chat; the new effort."""
        self.effort = EFFORTS[(EFFORTS.index(self.effort) + 1) % len(EFFORTS)]
        if self.chat_id is not None:
            self.history.set_effort(self.chat_id, self.effort)
        return self.effort

    def add_user_message(
        self, text: str, info: BackendInfo | None, attachments: Sequence[AttachedFile] = ()
    ) -> int:
        """Save a message the user sends with its attached files, creating a new chat first
        (recording the loaded model and backend, if known); the chat's id. The saved message
        is `sent` until the next one."""
        if self.chat_id is None:
            self.chat_id = self.history.create_chat(
                effort=self.effort,
                instructions=self.instructions or None,
                model=info.model if info else None,
                backend=info.backend if info else None,
            ).id
            self.instructions = ""  # the chat keeps them now
        self.sent = self.history.add_user_message(self.chat_id, text, attachments)
        return self.chat_id

    def take_back_sent(self) -> StoredMessage | None:
        """The message just sent did not fit the context: delete it (and its reply's row) so
        it does not stay in the chat, growing it, and the chat it started, if it did (its
        instructions kept for the new chat); the message, for the input box (None when there
        is none to take back)."""
        sent, self.sent = self.sent, None
        if sent is None or self.chat_id != sent.chat_id:
            return None
        self.history.delete_from(sent.id)
        if not self.history.messages(sent.chat_id):  # it was the chat's first: no empty chat
            chat = self.history.get_chat(sent.chat_id)
            self.history.delete_chat(sent.chat_id)
            self.chat_id, self.instructions = None, chat.instructions or ""
        return sent

    def begin_reply(self, chat_id: int) -> tuple[Conversation, int]:
        """What the model is to answer in chat `chat_id`, and the history row of its reply."""
        conversation = self.history.to_conversation(chat_id)
        reply_id = self.history.begin_assistant_message(chat_id, effort=self.effort).id
        return conversation, reply_id

    def next_conversation(self) -> Conversation:
        """What the next prompt will start with, for a prefill: the chat so far (a new chat:
        the system message and its instructions)."""
        if self.chat_id is None:
            return Conversation((), self.instructions or None)
        return self.history.to_conversation(self.chat_id)

    def drop_last_reply(self) -> bool | None:
        """Before writing the last reply again: delete it. None when the chat has no message
        (nothing to write), else whether a reply was deleted."""
        messages = self.messages()
        if not messages:
            return None
        if messages[-1].role != "assistant":
            return False
        self.history.delete_from(messages[-1].id)
        return True

    def start_edit(self) -> str | None:
        """Edit the last user message: its text (None when there is none). Nothing is deleted
        until the edited text is sent (`drop_edited`)."""
        users = [m for m in self.messages() if m.role == "user"]
        if not users:
            return None
        self.editing = users[-1].id
        return users[-1].content

    def drop_edited(self) -> bool:
        """The edited message is being sent: the old one and what followed go now. Whether
        anything was deleted."""
        editing, self.editing = self.editing, None
        if editing is None or self.chat_id is None:
            return False
        self.history.delete_from(editing)
        return True

    def cancel_edit(self) -> bool:
        """Esc while editing: keep the old message. False when not editing."""
        editing, self.editing = self.editing, None
        return editing is not None

    def current_instructions(self) -> str:
        """The open chat's instructions (a new chat's, until it is saved)."""
        if self.chat_id is None:
            return self.instructions
        return self.history.get_chat(self.chat_id).instructions or ""

    def set_instructions(self, chat_id: int | None, text: str) -> None:
        """Give chat `chat_id` (None: the new chat, when it is saved) these instructions."""
        if chat_id is None:
            self.instructions = text
        else:
            self.history.set_instructions(chat_id, text)
