"""Compactions and attachments in the history: what the next prompt is made of, what stays
saved, and what an edit undoes; a history written before they existed opens and gains them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from gptoss_local.attachments.model import AttachedFile
from gptoss_local.backends.base import Stats
from gptoss_local.session.conversation import SUMMARY_INTRO
from gptoss_local.session.history import History
from gptoss_local.session.migrations import MIGRATIONS

NOTES = AttachedFile(
    "notes.md", "/w/notes.md", "ab" * 32, "text", "File: notes.md\n```\nhi\n```", 9
)


def _turns(history: History, chat: int, count: int) -> None:
    for i in range(count):
        history.add_user_message(chat, f"question {i}")
        reply = history.begin_assistant_message(chat, effort="low").id
        history.append_to_assistant(reply, answer=f"answer {i}")
        history.finish_assistant(reply, Stats())


def test_a_compaction_starts_the_prompt_at_its_summary(history: History) -> None:
    chat = history.create_chat().id
    _turns(history, chat, 3)
    third = next(m for m in history.messages(chat) if m.content == "question 2")
    saved = history.add_compaction(chat, third.seq, "we talked about 0 and 1",
                                   messages_left_out=4, prompt_tokens_before=900,
                                   summary_tokens=40, seconds=1.5)  # fmt: skip
    assert history.compactions(chat) == [saved] and history.last_compaction(chat) == saved
    messages = history.to_conversation(chat).messages
    assert [m.content for m in messages] == [
        SUMMARY_INTRO + "we talked about 0 and 1",
        "question 2",
        "answer 2",
    ]
    entries = history.conversation_entries(chat)
    assert [seq for seq, _m in entries] == [None, third.seq, third.seq + 1]
    assert len(history.messages(chat)) == 6  # everything stays saved


def test_a_compaction_without_a_summary_only_leaves_out(history: History) -> None:
    chat = history.create_chat().id
    _turns(history, chat, 2)
    second = next(m for m in history.messages(chat) if m.content == "question 1")
    history.add_compaction(chat, second.seq, "")
    assert [m.content for m in history.to_conversation(chat).messages] == ["question 1", "answer 1"]


def test_deleting_messages_a_compaction_left_out_undoes_it(history: History) -> None:
    chat = history.create_chat().id
    _turns(history, chat, 3)
    messages = history.messages(chat)
    history.add_compaction(chat, messages[4].seq, "summary")
    history.delete_from(messages[4].id)  # the user message the prompts started at, and after
    assert history.last_compaction(chat) is not None  # still stands for messages 0-3
    history.delete_from(messages[2].id)
    assert history.last_compaction(chat) is None
    assert [m.content for m in history.to_conversation(chat).messages] == ["question 0", "answer 0"]


def test_attachments_are_saved_with_the_message_and_sent_after_its_text(
    history: History,
) -> None:
    chat = history.create_chat().id
    history.add_user_message(chat, "what is in it?", [NOTES])
    stored = history.messages(chat)[0]
    assert stored.content == "what is in it?" and stored.attachments == (NOTES,)
    sent = history.to_conversation(chat).messages[0].content
    assert sent == "what is in it?\n\n" + NOTES.text
    chat2 = history.create_chat().id  # another chat's messages carry none
    history.add_user_message(chat2, "plain")
    assert history.messages(chat2)[0].attachments == ()


def test_deleting_a_message_deletes_its_attachments(history: History, tmp_path: Path) -> None:
    chat = history.create_chat().id
    message = history.add_user_message(chat, "see", [NOTES])
    history.delete_from(message.id)
    with sqlite3.connect(history.path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM attachments").fetchone()[0] == 0


def test_a_history_from_before_attachments_opens_and_keeps_its_chats(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    with History(path, migrations=MIGRATIONS[:1]) as old:
        chat = old.create_chat().id
        old.add_user_message(chat, "written by version 1")
    with History(path) as history:
        assert history.messages(chat)[0].content == "written by version 1"
        history.add_user_message(chat, "now with a file", [NOTES])
        assert history.messages(chat)[1].attachments == (NOTES,)
        assert history.last_compaction(chat) is None


def test_the_export_shows_attachments_and_compactions(history: History) -> None:
    import json

    from gptoss_local.session.export import to_json, to_markdown

    chat = history.create_chat().id
    history.add_user_message(chat, "read this", [NOTES])
    _turns(history, chat, 2)
    later = next(m for m in history.messages(chat) if m.content == "question 1")
    history.add_compaction(chat, later.seq, "the user sent notes", messages_left_out=3,
                           prompt_tokens_before=5000, summary_tokens=12, seconds=2.0)  # fmt: skip
    messages, compactions = history.messages(chat), history.compactions(chat)
    text = to_markdown(history.get_chat(chat), messages, compactions)
    assert "**Attached** `notes.md` (text, 9 tokens" in text and NOTES.text in text
    marker = "*3 earlier messages summarised · the prompt was 5,000 tokens"
    assert text.index("answer 0") < text.index(marker) < text.index("question 1")
    assert "<details><summary>Summary</summary>\n\nthe user sent notes" in text
    doc = json.loads(to_json(history.get_chat(chat), messages, compactions))
    assert doc["messages"][0]["attachments"][0]["sha256"] == NOTES.sha256
    assert doc["compactions"][0]["summary"] == "the user sent notes"
