"""Stored messages → the `Conversation` the next reply continues."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence

from gptoss_local.conversation import Conversation, Message, Tool, call_record
from gptoss_local.session.records import Chat, StoredMessage


def conversation_from(
    chat: Chat,
    messages: Sequence[StoredMessage],
    tools: Sequence[Tool] = (),
    current_date: dt.date | None = None,
) -> Conversation:
    """The chat's history, instructions and the given tools as a `Conversation`.

    Args:
        chat: The chat (for its instructions).
        messages: Its stored messages in order.
        tools: Function tools offered for the next reply.
        current_date: Date shown to the model; today when omitted.
    """
    return Conversation(
        messages=tuple(conversation_messages(messages)),
        instructions=chat.instructions,
        tools=tuple(tools),
        current_date=current_date,
    )


def conversation_messages(messages: Iterable[StoredMessage]) -> list[Message]:
    """The stored messages the model should see next time, as the conversation's messages.

    Failed replies are left out (the user saw an error, not an answer), and so are partial ones
    with no text at all. A stopped or crash-interrupted reply keeps the text it had: the user
    read it, and the model should know what it already said.
    """
    out: list[Message] = []
    for stored in messages:
        if stored.role != "assistant":
            out.append(Message(stored.role, stored.content, tool_name=stored.tool_name))
        elif _included(stored):
            found = (call_record(call) for call in stored.tool_calls)
            calls = tuple(record for record in found if record is not None)
            out.append(Message("assistant", stored.content, stored.reasoning, calls))
    return out


def _included(stored: StoredMessage) -> bool:
    if stored.status == "failed":
        return False
    empty = not (stored.content or stored.reasoning or stored.tool_calls)
    return not (stored.status == "partial" and empty)
