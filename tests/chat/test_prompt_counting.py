"""Counting a prompt: by the engine's tokenizer where its capabilities declare one, else
estimated; an engine that keeps its tokenizer to itself (Ollama's, a server's) is never asked,
and a chat on it still compacts by the estimate."""

from __future__ import annotations

import pytest

from gptoss_local.backends.base import (
    BackendError,
    BackendInfo,
    Capabilities,
    GenerationSettings,
    ReplyRequest,
    Stats,
    no_tokenizer,
)
from gptoss_local.chat.context_keeper import ContextKeeper, estimate_prompt, prompt_counter
from gptoss_local.conversation import Conversation, Message
from gptoss_local.session.history import History
from gptoss_local.session.records import Compaction


class Untokenized:
    """An engine without the model's tokenizer, whose methods say so if called anyway."""

    capabilities = Capabilities(tools=True)

    def info(self) -> BackendInfo:
        return BackendInfo("scripted", "gpt-oss-test", "elsewhere", 1024)

    def count_prompt(self, request: ReplyRequest) -> int:
        raise no_tokenizer("scripted")

    def tokenize(self, text: str, special: bool = True) -> list[int]:
        raise no_tokenizer("scripted")


def test_without_a_tokenizer_the_prompt_is_estimated() -> None:
    """Before, the chat found `count_prompt` by its name and called it whatever the engine."""
    conversation = Conversation((Message("user", "word " * 50),), "Be brief.")
    count = prompt_counter(Untokenized(), ReplyRequest(conversation))  # type: ignore[arg-type]
    assert count(conversation.messages) == estimate_prompt(conversation)
    with pytest.raises(BackendError, match="keeps its tokenizer to itself") as refused:
        Untokenized().tokenize("hi")
    assert refused.value.kind == "unsupported"


def test_a_chat_on_an_engine_without_a_tokenizer_is_fitted_by_the_estimate(
    history: History,
) -> None:
    chat = history.create_chat(effort="low").id
    for i in range(12):
        history.add_user_message(chat, f"question {i}: " + "word " * 60)
        reply = history.begin_assistant_message(chat, effort="low").id
        history.append_to_assistant(reply, answer=f"answer {i}: " + "more " * 60)
        history.finish_assistant(reply, Stats())
    history.add_user_message(chat, "and the newest question")
    heard: list[object] = []
    keeper = ContextKeeper(history, chat, "drop_oldest", heard.append)
    asked = ReplyRequest(history.to_conversation(chat), GenerationSettings(effort="low"))
    fitted = keeper.fit(Untokenized(), asked)  # type: ignore[arg-type]
    (compaction,) = heard
    assert isinstance(compaction, Compaction) and compaction.messages_left_out > 0
    assert fitted.conversation.messages[-1].content == "and the newest question"
    assert fitted.settings == asked.settings
