"""Long chats and attachments in the chat screen, on a scripted backend (an 8,192-token context,
prompts estimated from their text): a compaction shown where it falls, a message too large
taken back to the box, and a reopened chat's markers and files."""

from __future__ import annotations

from tui_helpers import AppOn, ScriptedBackend, send, send_and_wait, wait_for, wait_for_model

from gptoss_local.attachments.model import AttachedFile
from gptoss_local.backends.base import Stats
from gptoss_local.events import AnswerDelta
from gptoss_local.session.history import History
from gptoss_local.tui.attachment_widgets import AttachmentChips, AttachmentList
from gptoss_local.tui.compaction_view import CompactionMarker
from gptoss_local.tui.widgets import ChatInput, ChatLog, UserMessage

NOTES = AttachedFile(
    "notes.md", "/w/notes.md", "cd" * 32, "text", "File: notes.md\n```\nhi\n```", 9
)
LONG = "the weather was fine and warm all week long. " * 90  # ~1,000 estimated tokens


def _long_chat(history: History, turns: int) -> int:
    chat = history.create_chat(effort="medium").id
    for i in range(turns):
        history.add_user_message(chat, f"question {i}: {LONG}")
        reply = history.begin_assistant_message(chat, effort="medium").id
        history.append_to_assistant(reply, answer=f"answer {i}: {LONG}")
        history.finish_assistant(reply, Stats())
    return chat


async def test_a_chat_past_its_context_is_compacted_where_it_falls(
    history: History, app_on: AppOn
) -> None:
    chat = _long_chat(history, 4)  # ~8,000 tokens: past the 6,144 a prompt may take at medium
    backend = ScriptedBackend([AnswerDelta("the user asked about the weather")])
    app = app_on(backend, chat_id=chat)
    async with app.run_test() as pilot:
        await wait_for_model(pilot)
        await send_and_wait(pilot, "and tomorrow?")
        log = app.query_one(ChatLog)
        await wait_for(pilot, lambda: bool(log.query(CompactionMarker)), what="the marker")
        (compaction,) = history.compactions(chat)
        assert compaction.summary == "the user asked about the weather"
        marker = log.query_one(CompactionMarker)
        after = log.children[log.children.index(marker) + 1]
        assert isinstance(after, UserMessage) and after.seq == compaction.before_seq
        summary_call, reply_call = backend.calls[-2:]
        assert "question 0" in summary_call[0].messages[0].content  # the turns to summarise
        assert reply_call[0].messages[0].content.endswith(compaction.summary)
        assert reply_call[0].messages[-1].content == "and tomorrow?"
    assert len(history.messages(chat)) == 10  # the whole chat stays saved


async def test_a_message_that_cannot_fit_goes_back_to_the_box(
    history: History, app_on: AppOn
) -> None:
    app = app_on(ScriptedBackend([AnswerDelta("never")]), context_policy="stop")
    huge = "word " * 8000  # ~10,000 estimated tokens
    async with app.run_test() as pilot:
        await wait_for_model(pilot)
        await send(pilot, huge)
        box = app.query_one(ChatInput)
        await wait_for(pilot, lambda: box.text == huge.strip(), what="the text back in the box")
        assert not app.query(UserMessage) and history.list_chats() == []
        assert app.chat_screen.state.chat_id is None  # no empty chat left behind


async def test_a_reopened_chat_shows_its_files_and_compactions(
    history: History, app_on: AppOn
) -> None:
    chat = history.create_chat().id
    history.add_user_message(chat, "read this", [NOTES])
    second = history.add_user_message(chat, "and now?")
    history.add_compaction(chat, second.seq, "the notes say hi", messages_left_out=1)
    app = app_on([], chat_id=chat)
    async with app.run_test() as pilot:
        await wait_for_model(pilot)
        log = app.query_one(ChatLog)
        kinds = [type(child).__name__ for child in log.children]
        assert kinds == ["UserMessage", "AttachmentList", "CompactionMarker", "UserMessage"]
        assert "notes.md · 9 tok" in str(log.query_one(AttachmentList).render())
        assert "1 earlier message summarised" in str(log.query_one(CompactionMarker).title)
        assert not app.query_one(AttachmentChips).attachments
