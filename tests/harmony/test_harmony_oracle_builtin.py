"""The built-in python tool against openai-harmony: where its description goes in the system
message, how its calls (``to=python``, content type ``code``) and results (author ``python``,
on the call's channel) are rendered, and how a call is parsed back."""

from __future__ import annotations

from typing import Any

import openai_harmony as oh
import pytest
from test_harmony_oracle_render import HELLO, check
from test_harmony_render import DATE

from gptoss_local.conversation import BuiltinTool, Message, Tool, ToolCallRecord
from gptoss_local.events import ToolCall
from gptoss_local.harmony import HarmonyStreamParser, merge_events, render_prompt
from gptoss_local.tools.python_tool import describe

PYTHON = BuiltinTool("python", describe(timeout=30, folder="/mnt/data", network_blocked=True))
OFFLINE_DOC = BuiltinTool("python", "Runs code.\n\nTwo paragraphs, a 'quote' and <angles>.")


def _chain(channel: str = "analysis") -> list[Message]:
    call = ToolCallRecord("python", {"code": "print(6*7)"}, channel)
    return [
        Message("user", "What is 6*7?"),
        Message("assistant", reasoning="Compute it.", tool_calls=(call,)),
        Message("tool", "42\n", tool_name="python"),
    ]


@pytest.mark.parametrize("builtin", [PYTHON, OFFLINE_DOC], ids=["ours", "other"])
def test_python_tool_in_the_system_message(oracle: Any, builtin: BuiltinTool) -> None:
    check(oracle, HELLO, builtin_tools=[builtin], current_date=DATE)
    tools = [Tool("f", "Does f.", {"type": "object", "properties": {"a": {"type": "string"}}})]
    check(oracle, HELLO, builtin_tools=[builtin], tools=tools, current_date=DATE)
    check(oracle, HELLO, builtin_tools=[builtin], instructions="Be brief.", current_date=DATE)


@pytest.mark.parametrize("channel", ["analysis", "commentary"])
def test_a_python_chain_in_progress(oracle: Any, channel: str) -> None:
    check(oracle, _chain(channel), builtin_tools=[PYTHON], current_date=DATE)
    done = [*_chain(channel), Message("assistant", "42", reasoning="It printed 42.")]
    check(oracle, [*done, Message("user", "Thanks")], builtin_tools=[PYTHON], current_date=DATE)
    check(oracle, done, builtin_tools=[PYTHON], keep_past_tool_calls=True, current_date=DATE)


def test_python_and_function_calls_in_one_chain(oracle: Any) -> None:
    tools = [Tool("lookup", "Looks up.", {"type": "object"})]
    messages = [
        *_chain(),
        Message("assistant", tool_calls=(ToolCallRecord("lookup", {"q": "x"}),)),
        Message("tool", '{"found": true}'),
    ]
    check(oracle, messages, builtin_tools=[PYTHON], tools=tools, current_date=DATE)


def test_python_call_with_code_as_text(oracle: Any) -> None:
    call = ToolCallRecord("python", "x = 1\nx + 1", "analysis")
    messages = [Message("user", "hi"), Message("assistant", tool_calls=(call,))]
    check(oracle, messages, builtin_tools=[PYTHON], current_date=DATE)
    assert (
        "<|start|>assistant to=python<|channel|>analysis code<|message|>x = 1\nx + 1<|call|>"
        in (render_prompt(messages, builtin_tools=[PYTHON], current_date=DATE))
    )


@pytest.mark.parametrize(
    "completion",
    [
        "<|channel|>analysis<|message|>Let me compute.<|end|><|start|>assistant<|channel|>analysis"
        " to=python code<|message|>print(6*7)<|call|>",
        "<|channel|>commentary to=python<|message|>import math\nmath.pi<|call|>",
        '<|channel|>analysis to=python code<|message|>{"not": json}<|call|>',
    ],
)
def test_python_calls_parse_as_openai_harmony_reads_them(oracle: Any, completion: str) -> None:
    tokens = oracle.encode(completion)
    theirs = oracle.encoding.parse_messages_from_completion_tokens(tokens, oh.Role.ASSISTANT)
    call = theirs[-1]
    parser = HarmonyStreamParser()
    events: list[Any] = []
    for token in tokens:
        events += parser.feed_token(oracle.piece(token), control=oracle.is_special(token))
    ours = [e for e in merge_events(events + parser.finish()) if isinstance(e, ToolCall)]
    code = call.content[0].text
    assert ours == [ToolCall("python", {"code": code}, code, None, call.channel)]


def test_a_builtin_is_offered_once_and_only_the_browser_is_a_namespace() -> None:
    with pytest.raises(ValueError, match="browser"):
        BuiltinTool("browser", "Searches the web.")  # the browser comes with its functions
    with pytest.raises(ValueError, match="namespace"):
        BuiltinTool("python", "Runs code.", (Tool("run"),))
    with pytest.raises(ValueError, match="once"):
        render_prompt(HELLO, builtin_tools=[PYTHON, PYTHON])
