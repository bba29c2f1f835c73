"""Stored messages → the `Conversation` the next reply continues."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence

from gptoss_local.attachments.message import with_attachments
from gptoss_local.conversation import Conversation, Message, Tool, answered_name, call_record
from gptoss_local.session.records import Chat, Compaction, StoredMessage

# How the summary of a compacted chat is put before the messages kept: as a user message, so
# every engine shows it to the model the same way, saying what it is.
SUMMARY_INTRO = (
    "[The earlier part of this conversation no longer fits the context. This is the summary "
    "you wrote of it; go on from it.]\n\n"
)


def conversation_from(
    chat: Chat,
    messages: Sequence[StoredMessage],
    tools: Sequence[Tool] = (),
    current_date: dt.date | None = None,
    compaction: Compaction | None = None,
) -> Conversation:
    """The chat's history, instructions and the given tools as a `Conversation`.

    Args:
        chat: The chat (for its instructions).
        messages: Its stored messages in order.
        tools: Function tools offered for the next reply.
        current_date: Date shown to the model; today when omitted.
        compaction: Where the prompts start (the chat's last compaction), if anywhere.
    """
    return Conversation(
        messages=tuple(message for _seq, message in conversation_entries(messages, compaction)),
        instructions=chat.instructions,
        tools=tuple(tools),
        current_date=current_date,
    )


def conversation_entries(
    messages: Iterable[StoredMessage], compaction: Compaction | None = None
) -> list[tuple[int | None, Message]]:
    """The stored messages the model should see next time, from where `compaction` starts the
    prompts, after its summary, each with the `seq` of the stored message it comes from (None:
    the summary).

    Failed replies are left out (the user saw an error, not an answer), and so are partial ones
    with no text at all. A stopped or crash-interrupted reply keeps the text it had: the user
    read it, and the model should know what it already said.
    """
    start = compaction.before_seq if compaction is not None else None
    kept = [m for m in messages if start is None or m.seq >= start]
    entries: list[tuple[int | None, Message]] = []
    if compaction is not None and compaction.summary:
        entries.append((None, Message("user", SUMMARY_INTRO + compaction.summary)))
    for stored in kept:
        message = _message(stored)
        if message is not None:
            entries.append((stored.seq, message))
    return entries


def _message(stored: StoredMessage) -> Message | None:
    """The stored message as the model sees it (a user's with its attached files' text), or
    None when it is left out."""
    if stored.role == "user":
        return Message("user", with_attachments(stored.content, stored.attachments))
    if stored.role != "assistant":
        name = answered_name(stored.tool_name) if stored.tool_name else None
        return Message(stored.role, stored.content, tool_name=name)
    if not _included(stored):
        return None
    found = (call_record(call) for call in stored.tool_calls)
    calls = tuple(record for record in found if record is not None)
    return Message("assistant", stored.content, stored.reasoning, calls)


def _included(stored: StoredMessage) -> bool:
    if stored.status == "failed":
        return False
    empty = not (stored.content or stored.reasoning or stored.tool_calls)
    return not (stored.status == "partial" and empty)
