"""to_conversation: what of the stored history the model sees next time."""

from __future__ import annotations

import datetime as dt

from gptoss_local.conversation import Message, Tool, ToolCallRecord
from gptoss_local.events import ToolCall
from gptoss_local.harmony import render_prompt
from gptoss_local.session.history import History


def build(history: History) -> int:
    chat = history.create_chat(instructions="Be brief.")
    history.add_user_message(chat.id, "What is the weather in Paris?")
    call = history.begin_assistant_message(chat.id)
    history.append_to_assistant(call.id, reasoning="Use the tool.", answer="Checking.")
    history.finish_assistant(call.id, tool_calls=[ToolCall("get_weather", {"city": "Paris"}, "")])
    history.add_tool_message(chat.id, "get_weather", '{"temp": 21}')
    answer = history.begin_assistant_message(chat.id)
    history.append_to_assistant(answer.id, reasoning="21 degrees.", answer="21 °C and sunny.")
    history.finish_assistant(answer.id)
    history.add_user_message(chat.id, "And tomorrow?")
    failed = history.begin_assistant_message(chat.id)
    history.append_to_assistant(failed.id, answer="Tomor")
    history.fail_assistant(failed.id, "decode failed")
    history.begin_assistant_message(chat.id)  # an empty partial: the crash came before a token
    stopped = history.begin_assistant_message(chat.id)
    history.append_to_assistant(stopped.id, reasoning="Forecast...", answer="Probably rain")
    history.mark_stopped(stopped.id)
    return chat.id


def test_failed_and_empty_partial_replies_are_left_out(history: History) -> None:
    chat_id = build(history)
    tools = (Tool("get_weather", "Weather of a city."),)
    conversation = history.to_conversation(chat_id, tools=tools, current_date=dt.date(2026, 5, 1))
    assert conversation.instructions == "Be brief."
    assert conversation.tools == tools and conversation.current_date == dt.date(2026, 5, 1)
    assert conversation.messages == (
        Message("user", "What is the weather in Paris?"),
        Message(
            "assistant",
            "Checking.",
            "Use the tool.",
            (ToolCallRecord("get_weather", {"city": "Paris"}),),
        ),
        Message("tool", '{"temp": 21}', tool_name="get_weather"),
        Message("assistant", "21 °C and sunny.", "21 degrees."),
        Message("user", "And tomorrow?"),
        Message("assistant", "Probably rain", "Forecast..."),
    )
    prompt = render_prompt(conversation.messages, instructions=conversation.instructions)
    assert "Probably rain" in prompt and "Tomor<" not in prompt and "decode failed" not in prompt


def test_a_crash_interrupted_reply_with_text_is_kept(history: History) -> None:
    chat = history.create_chat()
    history.add_user_message(chat.id, "hi")
    reply = history.begin_assistant_message(chat.id)
    history.append_to_assistant(reply.id, answer="Hello th")
    assert history.to_conversation(chat.id).messages[-1] == Message("assistant", "Hello th")


def test_unparsed_arguments_go_back_raw_and_unrenderable_calls_are_dropped(
    history: History,
) -> None:
    chat = history.create_chat()
    history.add_user_message(chat.id, "go")
    reply = history.begin_assistant_message(chat.id)
    calls = [
        ToolCall("lookup", {}, "{bad", "arguments are not valid JSON"),
        ToolCall("functions.weird-name", {}, "{}"),
    ]
    history.finish_assistant(reply.id, tool_calls=calls)
    last = history.to_conversation(chat.id).messages[-1]
    assert last.tool_calls == (ToolCallRecord("lookup", "{bad"),)
