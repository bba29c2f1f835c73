"""ChatState without a UI: a new chat saved with its first message, effort and instructions kept
until then, an edit that deletes nothing before its replacement is sent, what a prefill reads."""

from __future__ import annotations

from gptoss_local.backends.base import BackendInfo
from gptoss_local.chat.chat_state import ChatState
from gptoss_local.session.history import History

INFO = BackendInfo("llamacpp", "gpt-oss-20b", "entirely on the GPU", 8192)


def exchange(state: ChatState, question: str, answer: str) -> None:
    """The user asks, the model answers (as the reply worker saves it)."""
    chat_id = state.add_user_message(question, INFO)
    _conversation, reply_id = state.begin_reply(chat_id)
    state.history.append_to_assistant(reply_id, answer=answer)
    state.history.finish_assistant(reply_id, None)


def test_a_new_chat_is_created_by_its_first_message_with_what_was_chosen(
    history: History,
) -> None:
    state = ChatState(history, None, "medium")
    state.instructions = "Be brief."
    assert state.cycle_effort() == "high" and state.title() == ""
    assert state.next_conversation().instructions == "Be brief."  # what a prefill reads
    chat_id = state.add_user_message("hello", INFO)
    chat = history.get_chat(chat_id)
    assert (chat.effort, chat.instructions, chat.model, chat.backend) == (
        "high", "Be brief.", "gpt-oss-20b", "llamacpp",
    )  # fmt: skip
    assert state.chat_id == chat_id and state.instructions == ""  # the chat keeps them now
    assert state.title() == "hello"
    conversation, reply_id = state.begin_reply(chat_id)
    assert [m.content for m in conversation.messages] == ["hello"]
    assert history.messages(chat_id)[-1].id == reply_id


def test_effort_and_instructions_of_a_saved_chat_are_stored(history: History) -> None:
    saved = history.create_chat(effort="low").id
    state = ChatState(history, saved, "medium")
    state.load_effort()
    assert state.effort == "low"
    state.cycle_effort()
    assert history.get_chat(saved).effort == "medium"
    state.set_instructions(saved, "Answer like a pirate.")
    assert state.current_instructions() == "Answer like a pirate."
    state.set_instructions(None, "for the next new chat")  # a modal opened on a new chat
    assert state.instructions == "for the next new chat"


def test_an_edit_deletes_the_old_message_only_when_its_replacement_is_sent(
    history: History,
) -> None:
    state = ChatState(history, None, "medium")
    exchange(state, "first", "one")
    exchange(state, "second", "two")
    assert state.start_edit() == "second"
    assert len(history.messages(state.chat_id or 0)) == 4  # nothing deleted yet
    assert state.cancel_edit() and not state.cancel_edit()
    assert len(history.messages(state.chat_id or 0)) == 4
    state.start_edit()
    assert state.drop_edited() and not state.drop_edited()
    assert [m.content for m in state.messages()] == ["first", "one"]


def test_regenerating_drops_the_last_reply_only(history: History) -> None:
    state = ChatState(history, None, "medium")
    assert state.drop_last_reply() is None  # a new chat: nothing to write again
    exchange(state, "question", "answer")
    assert state.drop_last_reply() is True
    assert [m.role for m in state.messages()] == ["user"]
    assert state.drop_last_reply() is False  # the question stays, to be answered again


def test_switching_chats_forgets_the_edit_and_unsaved_instructions(history: History) -> None:
    state = ChatState(history, None, "medium")
    exchange(state, "question", "answer")
    state.start_edit()
    other = history.create_chat().id
    state.instructions = "unsaved"
    state.switch(other)
    assert (state.chat_id, state.editing, state.instructions) == (other, None, "")
    assert state.start_edit() is None and state.messages() == []
