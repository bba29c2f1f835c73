"""The built-in browser against openai-harmony: its namespace in the system message is what
``SystemContent.with_browser_tool()`` renders, byte for byte; its calls (``to=browser.search
code`` on the analysis channel) and results (author ``browser.search``) are rendered as
openai-harmony renders them, and a call is parsed back as it reads it."""

from __future__ import annotations

import json
from typing import Any

import openai_harmony as oh
import pytest
from test_harmony_oracle_builtin import PYTHON
from test_harmony_oracle_render import HELLO, check
from test_harmony_render import DATE

from gptoss_local.conversation import Message, Tool, ToolCallRecord
from gptoss_local.events import ToolCall
from gptoss_local.harmony import HarmonyStreamParser, merge_events, render_prompt
from gptoss_local.tools.browser_tool import BROWSER, DESCRIPTION


def _browse(channel: str = "analysis") -> list[Message]:
    search = ToolCallRecord("search", {"query": "zebra stripes"}, channel, "browser")
    opened = ToolCallRecord("open", {"id": 0, "cursor": 0}, channel, "browser")
    return [
        Message("user", "Why do zebras have stripes?"),
        Message("assistant", reasoning="Search the notes.", tool_calls=(search,)),
        Message(
            "tool",
            "[0] zebra stripes\n**viewing lines [0 - 2] of 2**\n\nL0: ...",
            tool_name="search",
        ),
        Message("assistant", reasoning="Open the first.", tool_calls=(opened,)),
        Message("tool", "[1] Zebras (notes/zebras.md)\n...", tool_name="open"),
    ]


def test_the_declaration_is_openai_harmonys_browser() -> None:
    theirs = oh.ToolNamespaceConfig.browser()
    assert (BROWSER.name, BROWSER.description) == (theirs.name, theirs.description)
    assert theirs.description == DESCRIPTION
    ours = [(t.name, t.description, t.parameters) for t in BROWSER.functions]
    assert ours == [(t.name, t.description, t.parameters) for t in theirs.tools]


def test_the_browser_in_the_system_message(oracle: Any) -> None:
    check(oracle, HELLO, builtin_tools=[BROWSER], current_date=DATE)
    prompt = render_prompt(HELLO, builtin_tools=[BROWSER], current_date=DATE)
    assert "# Tools\n\n## browser\n\n// Tool for browsing.\n" in prompt
    assert "type search = (_: {\nquery: string,\ntopn?: number, // default: 10\n" in prompt
    assert "id?: number | string, // default: -1\n" in prompt


@pytest.mark.parametrize("order", ["python first", "browser first"])
def test_the_browser_beside_python_and_functions(oracle: Any, order: str) -> None:
    builtins = [PYTHON, BROWSER] if order == "python first" else [BROWSER, PYTHON]
    tools = [Tool("f", "Does f.", {"type": "object", "properties": {"a": {"type": "string"}}})]
    check(oracle, HELLO, builtin_tools=builtins, current_date=DATE)
    check(oracle, HELLO, builtin_tools=builtins, tools=tools, instructions="Be brief.",
          current_date=DATE)  # fmt: skip


@pytest.mark.parametrize("channel", ["analysis", "commentary"])
def test_a_browsing_chain_in_progress_and_done(oracle: Any, channel: str) -> None:
    check(oracle, _browse(channel), builtin_tools=[BROWSER], current_date=DATE)
    done = [*_browse(channel), Message("assistant", "Camouflage 【1†L3-L4】.", reasoning="Found.")]
    check(oracle, [*done, Message("user", "Thanks")], builtin_tools=[BROWSER], current_date=DATE)
    check(oracle, done, builtin_tools=[BROWSER], keep_past_tool_calls=True, current_date=DATE)
    prompt = render_prompt(_browse(channel), builtin_tools=[BROWSER], current_date=DATE)
    assert (
        f"<|start|>assistant to=browser.search<|channel|>{channel} code<|message|>"
        '{"query": "zebra stripes"}<|call|>'
        f"<|start|>browser.search to=assistant<|channel|>{channel}<|message|>[0] zebra"
    ) in prompt


@pytest.mark.parametrize(
    "completion",
    [
        "<|channel|>analysis<|message|>Need to look.<|end|><|start|>assistant<|channel|>analysis"
        ' to=browser.search code<|message|>{"query": "zebra", "topn": 5}<|call|>',
        '<|channel|>analysis to=browser.open code<|message|>{"id": 3, "cursor": 0}<|call|>',
        '<|channel|>commentary to=browser.find <|constrain|>json<|message|>{"pattern": "x"}'
        "<|call|>",
    ],
)
def test_browser_calls_parse_as_openai_harmony_reads_them(oracle: Any, completion: str) -> None:
    tokens = oracle.encode(completion)
    theirs = oracle.encoding.parse_messages_from_completion_tokens(tokens, oh.Role.ASSISTANT)
    call = theirs[-1]
    parser = HarmonyStreamParser()
    events: list[Any] = []
    for token in tokens:
        events += parser.feed_token(oracle.piece(token), control=oracle.is_special(token))
    ours = [e for e in merge_events(events + parser.finish()) if isinstance(e, ToolCall)]
    raw = call.content[0].text
    assert ours == [ToolCall(call.recipient, json.loads(raw), raw, None, call.channel)]
