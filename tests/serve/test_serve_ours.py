"""The field only our own client sends (`serve.ours`): read into the conversation, refused
part by part when wrong, the reply's calls with their channel for it alone, and a browser
the client offers kept as the client's (its calls go back to it, even under `serve --browser`)."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest
from read_helpers import PlainEngine, chat, refused

from gptoss_local.backends.base import GenerationSettings, Reply, ReplyRequest, Stats
from gptoss_local.backends.openai.backend import OpenAIClientBackend
from gptoss_local.conversation import BuiltinTool, Conversation, Message, Tool, ToolCallRecord
from gptoss_local.events import Event, ReasoningDelta, ToolCall, TurnEnded
from gptoss_local.harmony.names import ToolNames
from gptoss_local.library import Library
from gptoss_local.serve.browsing import BrowsingStreamer
from gptoss_local.serve.chat_reply import tool_call_json
from gptoss_local.serve.guard import Guard
from gptoss_local.serve.server import make_server
from gptoss_local.serve.service import Service
from gptoss_local.urls import OURS_FIELD

PYTHON = {"name": "python", "description": "Runs code."}
SEARCH = {"type": "function", "name": "search", "description": "Finds.",
          "parameters": {"type": "object", "properties": {}}}  # fmt: skip
BROWSER = {"name": "browser", "description": "Reads notes.", "functions": [SEARCH]}
AGENTS = {"type": "namespace", "name": "agents", "description": "Helpers.", "tools": [SEARCH]}


def test_the_field_brings_builtins_namespaces_the_date_and_each_calls_channel() -> None:
    ours = {"builtin_tools": [PYTHON, BROWSER], "tools": [AGENTS], "current_date": "2026-12-02"}
    call = {"id": "c1", "type": "function",
            "function": {"name": "browser.search", "arguments": '{"query": "x"}'},
            OURS_FIELD: {"channel": "analysis", "arguments": {"query": "x"}}}  # fmt: skip
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "c1", "content": "found"}]  # fmt: skip
    conversation = chat(messages=messages, **{OURS_FIELD: ours}).conversation
    assert [b.name for b in conversation.builtin_tools] == ["python", "browser"]
    assert conversation.builtin_tools[1].functions[0].name == "search"
    assert [(t.namespace, t.name) for t in conversation.tools] == [("agents", "search")]
    assert conversation.current_date == dt.date(2026, 12, 2)
    assert conversation.messages[1].tool_calls == (
        ToolCallRecord("search", {"query": "x"}, "analysis", "browser"),
    )
    assert conversation.messages[2].tool_name == "search"
    plain = chat(messages=messages[:1])  # another client's request is read as before
    assert plain.conversation.builtin_tools == () and plain.conversation.current_date is None


@pytest.mark.parametrize(
    ("ours", "param"),
    [
        ([], OURS_FIELD),
        ({"builtin_tools": [{"name": "shell", "description": "x"}]}, "builtin_tools[0]"),
        ({"builtin_tools": [{"name": "python"}]}, "builtin_tools[0]"),
        ({"builtin_tools": [{**PYTHON, "functions": [SEARCH]}]}, "builtin_tools[0]"),
        ({"builtin_tools": {}}, "builtin_tools"),
        ({"tools": [{"type": "namespace", "name": "python", "tools": [SEARCH]}]}, "tools[0]"),
        ({"current_date": "tomorrow"}, "current_date"),
    ],
)
def test_a_wrong_part_of_the_field_is_a_400_naming_it(ours: Any, param: str) -> None:
    error = refused(chat, **{OURS_FIELD: ours})
    assert error.param is not None and error.param.endswith(param)


def test_a_reply_gives_our_client_the_calls_channel_and_text_as_written() -> None:
    call = ToolCall("python", {"code": ""}, "", None, "analysis")
    names = ToolNames()
    assert tool_call_json(call, names)["function"]["arguments"] == "{}"  # as before, for others
    assert OURS_FIELD not in tool_call_json(call, names)
    ours = tool_call_json(call, names, 0, ours=True)
    assert ours["function"] == {"name": "python", "arguments": ""}
    assert ours[OURS_FIELD] == {"channel": "analysis"} and ours["index"] == 0


def test_a_browser_the_client_offers_is_not_answered_by_the_servers(tmp_path: Path) -> None:
    called = ToolCall("browser.search", {"query": "x"}, '{"query": "x"}', None, "analysis")
    asked: list[ReplyRequest] = []

    def turn() -> Generator[Event, None, Stats]:
        yield ReasoningDelta("Search")
        yield called
        yield TurnEnded("call")
        return Stats(stop_reason="call")

    def stream(request: ReplyRequest, cancel: threading.Event) -> Reply:
        asked.append(request)
        return Reply(turn())

    mine = BuiltinTool("browser", "My notes.", (Tool("search", "Finds."),))
    conversation = Conversation((Message("user", "hi"),), builtin_tools=(mine,))
    with Library.open(tmp_path / "l.db") as library:
        browsing = BrowsingStreamer(stream, library, (str(tmp_path),))
        reply = browsing(ReplyRequest(conversation), threading.Event())
        events = list(reply)
    assert called in events and events[-1] == TurnEnded("call")  # back to the client
    assert len(asked) == 1 and asked[0].conversation.builtin_tools == (mine,)
    assert reply.stats is not None and reply.stats.stop_reason == "call"


def test_our_client_offers_built_ins_only_where_the_engine_says_it_shows_them() -> None:
    """An engine whose model cannot be shown them (or one too old to read our field) does not
    say so in its state: the client then offers functions only, as to any server."""
    service = Service(PlainEngine(), ("gpt-oss-20b",), GenerationSettings(), instance="p1")
    assert service.engine_state()["builtin_tools"] is False
    server = make_server(service, Guard("127.0.0.1", 0, None))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        client = OpenAIClientBackend(server.url)
    finally:
        server.stop()
        thread.join(10)
    assert client.ours is not None  # ours, yet its engine shows no built-ins
    assert not client.capabilities.builtin_tools and not client.capabilities.namespaces
