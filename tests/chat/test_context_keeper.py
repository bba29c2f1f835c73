"""A chat that outgrows its context goes on: the real tiny model counts the prompt, writes the
summary (steered, so it answers), and the history records where the prompts start now."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from engine_helpers import open_tiny, steered

from gptoss_local.backends.base import GenerationSettings, ReplyRequest, ResponseFormat, Stats
from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
from gptoss_local.chat.context_budget import Budget
from gptoss_local.chat.context_keeper import (
    Compacting,
    ContextFull,
    ContextKeeper,
    prompt_counter,
)
from gptoss_local.conversation import Conversation, Message
from gptoss_local.session.conversation import SUMMARY_INTRO
from gptoss_local.session.history import History
from gptoss_local.session.records import Compaction

SETTINGS = GenerationSettings(effort="low", seed=1)


@pytest.fixture(scope="module")
def small(tiny_gguf: Path) -> Iterator[LlamaCppBackend]:
    """The tiny model with a 1,024-token context, steered to answer "Hello there"."""
    with open_tiny(tiny_gguf, context=1024) as backend:
        backend.options = steered(backend)
        yield backend


def _long_chat(history: History, turns: int, words: int = 60) -> int:
    chat = history.create_chat(effort="low").id
    for i in range(turns):
        history.add_user_message(chat, f"question {i}: " + "word " * words)
        reply = history.begin_assistant_message(chat, effort="low").id
        history.append_to_assistant(reply, answer=f"answer {i}: " + "more " * words)
        history.finish_assistant(reply, Stats())
    history.add_user_message(chat, "and the newest question")
    return chat


def test_a_chat_past_its_context_is_compacted_and_goes_on(
    small: LlamaCppBackend, history: History
) -> None:
    chat = _long_chat(history, 8)
    heard: list[object] = []
    keeper = ContextKeeper(history, chat, "compact", heard.append)
    whole = history.to_conversation(chat)
    assert small.count_prompt(_request(whole)) > Budget(1024, "low").prompt_limit
    fitted = keeper.fit(small, _request(whole)).conversation
    compaction = history.last_compaction(chat)
    assert compaction is not None and heard[0] == Compacting(compaction.messages_left_out)
    assert heard[-1] == compaction and compaction.summary == "Hello there"
    assert compaction.prompt_tokens_before > 1024 - 256 and compaction.seconds > 0
    assert fitted.messages[0].content == SUMMARY_INTRO + "Hello there"
    assert fitted.messages[-1].content == "and the newest question"
    assert small.count_prompt(_request(fitted)) <= Budget(1024, "low").prompt_limit
    assert len(history.messages(chat)) == 17  # the whole chat stays saved
    again = keeper.fit(small, _request(history.to_conversation(chat)))
    assert again.conversation == fitted  # fits now


def test_drop_oldest_leaves_turns_out_without_a_summary(
    small: LlamaCppBackend, history: History
) -> None:
    chat = _long_chat(history, 12, words=15)
    heard: list[object] = []
    whole = history.to_conversation(chat).messages
    fitted = (
        ContextKeeper(history, chat, "drop_oldest", heard.append)
        .fit(small, _request(history.to_conversation(chat)))
        .conversation
    )
    (compaction,) = heard
    assert isinstance(compaction, Compaction) and compaction.summary == ""
    assert fitted.messages[0].content.startswith("question ")
    assert fitted.messages[-1].content == "and the newest question"
    # As few turns left out as make it fit: one more would not have fitted.
    kept = len(fitted.messages)
    assert whole[-kept:] == fitted.messages and compaction.messages_left_out == 25 - kept
    one_more = replace(fitted, messages=whole[-kept - 2 :])
    assert small.count_prompt(_request(one_more)) > Budget(1024, "low").prompt_limit


def test_stop_and_a_message_too_large_are_refused_without_saving(
    small: LlamaCppBackend, history: History
) -> None:
    chat = _long_chat(history, 8)
    with pytest.raises(ContextFull, match='context_policy is "stop"'):
        ContextKeeper(history, chat, "stop").fit(small, _request(history.to_conversation(chat)))
    huge = history.create_chat().id
    history.add_user_message(huge, "word " * 2000)
    with pytest.raises(ContextFull, match="1,024-token context"):
        ContextKeeper(history, huge, "compact").fit(small, _request(history.to_conversation(huge)))
    assert history.compactions(chat) == history.compactions(huge) == []


def test_the_prompt_is_counted_as_the_request_will_send_it(small: LlamaCppBackend) -> None:
    """`run --schema` checks the room with the format shown to the model in the prompt."""
    plain = _request(Conversation((Message("user", "hi"),)))
    shaped = replace(plain, response_format=ResponseFormat({"type": "object"}, "answer"))
    messages = plain.conversation.messages
    assert prompt_counter(small, plain)(messages) == small.count_prompt(plain)
    counted = prompt_counter(small, shaped)(messages)
    assert counted == small.count_prompt(shaped) > small.count_prompt(plain)


def _request(conversation: Conversation) -> ReplyRequest:
    return ReplyRequest(conversation, SETTINGS)
