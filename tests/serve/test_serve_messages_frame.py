"""The frame the three message readers share (`fields.each_message`): what is not a non-empty
array of objects is a 400 naming the place, in each API's spelling of it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from gptoss_local.harmony.names import ToolNames
from gptoss_local.serve.anthropic.blocks import conversation
from gptoss_local.serve.chat_request import ChatReader
from gptoss_local.serve.errors import ApiError
from gptoss_local.serve.fields import Body, each_message
from gptoss_local.serve.limits import Limits
from gptoss_local.serve.ollama.messages import chat_history


def _chat(items: Any) -> object:
    return ChatReader().history(Body({"messages": items}), Limits(), ToolNames())


def _ollama(items: Any) -> object:
    return chat_history(items, ToolNames())


def _anthropic(items: Any) -> object:
    return conversation(items, ToolNames())


READERS = [(_chat, "messages[1]"), (_ollama, "messages[1]"), (_anthropic, "messages.1")]


def _refusal(read: Callable[[Any], object], items: Any) -> ApiError:
    with pytest.raises(ApiError) as caught:
        read(items)
    assert caught.value.status == 400
    return caught.value


@pytest.mark.parametrize(("read", "second"), READERS)
def test_each_reader_refuses_what_is_not_a_non_empty_array_of_objects(
    read: Callable[[Any], object], second: str
) -> None:
    assert _refusal(read, []).param == "messages"
    not_an_object = _refusal(read, [{"role": "user", "content": "hi"}, "hi"])
    assert (not_an_object.param, not_an_object.message) == (
        second,
        "each message must be an object",
    )


@pytest.mark.parametrize(("read", "second"), READERS)
def test_each_reader_reads_the_messages_in_order(
    read: Callable[[Any], object], second: str
) -> None:
    items = [{"role": "user", "content": "one"}, {"role": "user", "content": "two"}]
    messages = read(items)[0]  # type: ignore[index]
    assert [m.content for m in messages] == ["one", "two"]


def test_a_name_the_renderer_refuses_is_a_400_at_its_message() -> None:
    read: list[str] = []

    def refuse_second(item: dict[str, Any], where: str) -> None:
        read.append(where)
        if item.get("bad"):
            raise ValueError("tool names cannot hold '<'")

    with pytest.raises(ApiError) as caught:
        each_message([{}, {"bad": True}, {}], refuse_second)
    assert (caught.value.status, caught.value.param) == (400, "messages[1]")
    assert caught.value.message == "tool names cannot hold '<'"
    assert read == ["messages[0]", "messages[1]"]  # nothing after the refused message
