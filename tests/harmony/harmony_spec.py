"""Our conversations as openai-harmony messages, and its parsed messages as our events.

The history rules are written out here from the Harmony spec, apart from the renderer's own
code: finished turns keep their final answers (and, with keep_past_tool_calls, their calls
and results), never their analysis; the turn in progress (a chain of tool calls after the
last user message) keeps everything. openai-harmony's own dropping differs from the spec
(test_harmony_oracle_render.py shows where), so it is handed the messages the spec keeps.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import openai_harmony as oh

from gptoss_local.conversation import (
    BUILTIN_NAMESPACES,
    BUILTIN_TOOL_NAMES,
    BuiltinTool,
    Message,
    Tool,
    ToolCallRecord,
)
from gptoss_local.events import AnswerDelta, Event, PreambleDelta, ReasoningDelta, ToolCall

EFFORTS = {"low": oh.ReasoningEffort.LOW, "medium": oh.ReasoningEffort.MEDIUM}
EFFORTS["high"] = oh.ReasoningEffort.HIGH


def preamble(
    effort: str = "medium",
    instructions: str | None = None,
    tools: Sequence[Tool] = (),
    current_date: dt.date | None = None,
    knowledge_cutoff: str = "2024-06",
    builtin_tools: Sequence[BuiltinTool] = (),
) -> list[oh.Message]:
    """The system message, and the developer message when there is something to say."""
    system = oh.SystemContent.new().with_reasoning_effort(EFFORTS[effort])
    system = system.with_knowledge_cutoff(knowledge_cutoff)
    system = system.with_conversation_start_date(f"{current_date or dt.date.today():%Y-%m-%d}")
    for builtin in builtin_tools:
        if builtin.name == "browser":  # openai-harmony's own browser, as gpt-oss was trained
            system = system.with_browser_tool()
            continue
        config = oh.ToolNamespaceConfig(
            name=builtin.name, description=builtin.description, tools=[]
        )
        system = system.with_tools(config)
    out = [oh.Message.from_role_and_content(oh.Role.SYSTEM, system)]
    if instructions or tools:
        developer = oh.DeveloperContent.new()
        if instructions:
            developer = developer.with_instructions(instructions)
        for space in dict.fromkeys(t.namespace for t in tools):
            inside = [t for t in tools if t.namespace == space]
            described = [
                oh.ToolDescription.new(t.name, t.description, t.parameters) for t in inside
            ]
            about = next((t.namespace_description for t in inside if t.namespace_description), "")
            about = about or None
            config = oh.ToolNamespaceConfig(name=space, description=about, tools=described)
            developer = developer.with_tools(config)
        out.append(oh.Message.from_role_and_content(oh.Role.DEVELOPER, developer))
    return out


def history(messages: Sequence[Message], keep_past_tool_calls: bool = False) -> list[oh.Message]:
    """The messages the spec keeps, as openai-harmony messages."""
    last_user = max((i for i, m in enumerate(messages) if m.role == "user"), default=-1)
    replies = [m for m in messages[last_user + 1 :] if m.role == "assistant"]
    chain_open = bool(replies and replies[-1].tool_calls)
    out: list[oh.Message] = []
    waiting: list[ToolCallRecord] = []  # calls not answered yet, oldest first
    for i, msg in enumerate(messages):
        current = chain_open and i > last_user
        keep_calls = keep_past_tool_calls or current
        if msg.role == "user":
            out.append(oh.Message.from_role_and_content(oh.Role.USER, msg.content))
        elif msg.role == "tool":
            name = msg.tool_name or waiting[0].name
            found = [call for call in waiting if call.name == name]
            if found:
                waiting.remove(found[0])
            builtin = name in BUILTIN_TOOL_NAMES
            channel = found[0].channel if found else ("analysis" if builtin else "commentary")
            if keep_calls:
                space = found[0].namespace if found else "functions"
                out.append(_tool_result(name, msg.content, channel, space))
        else:
            out += _assistant(msg, current, keep_calls)
            waiting += msg.tool_calls
    return out


def _assistant(msg: Message, current: bool, keep_calls: bool) -> list[oh.Message]:
    out = []
    if current and msg.reasoning:
        out.append(_on_channel(msg.reasoning, "analysis"))
    if not msg.tool_calls:
        return out + ([_on_channel(msg.content, "final")] if msg.content else [])
    if keep_calls:
        out += [_on_channel(msg.content, "commentary")] if msg.content else []
        out += [_call(call) for call in msg.tool_calls]
    return out


def _on_channel(text: str, channel: str) -> oh.Message:
    return oh.Message.from_role_and_content(oh.Role.ASSISTANT, text).with_channel(channel)


def _call(call: ToolCallRecord) -> oh.Message:
    args = call.arguments
    if call.namespace in BUILTIN_NAMESPACES:  # the browser's calls: ``to=browser.open code``
        text = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
        msg = _on_channel(text, call.channel).with_recipient(f"{call.namespace}.{call.name}")
        return msg.with_content_type("code")
    if call.name in BUILTIN_TOOL_NAMES:
        code = args.get("code") if isinstance(args, dict) else args
        text = code if isinstance(code, str) else json.dumps(args, ensure_ascii=False)
        msg = _on_channel(text, call.channel).with_recipient(call.name)
        return msg.with_content_type("code")
    text = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
    msg = _on_channel(text, call.channel).with_recipient(f"{call.namespace}.{call.name}")
    return msg.with_content_type("<|constrain|>json")


def _tool_result(
    name: str, text: str, channel: str = "commentary", namespace: str = "functions"
) -> oh.Message:
    python = name in BUILTIN_TOOL_NAMES and namespace not in BUILTIN_NAMESPACES
    author_name = name if python else f"{namespace}.{name}"
    author = oh.Author.new(oh.Role.TOOL, author_name)
    msg = oh.Message.from_author_and_content(author, text).with_recipient("assistant")
    return msg.with_channel(channel)


def events(messages: Sequence[oh.Message], *, cut: bool = False) -> list[Event]:
    """openai-harmony's parsed assistant messages as our events (TurnEnded left out).

    A message to a recipient is a tool call; otherwise ``final`` is the answer,
    ``commentary`` a preamble and any other channel reasoning. `cut`: the last message
    was cut off by the end of the output, so a tool call there is incomplete.
    """
    out: list[Event] = []
    for i, msg in enumerate(messages):
        text = "".join(c.text for c in msg.content if isinstance(c, oh.TextContent))
        recipient = (
            msg.recipient if msg.recipient not in (None, "assistant", "all", "user") else None
        )
        if recipient:
            call = _tool_call(recipient, text, cut and i == len(messages) - 1)
            out.append(replace(call, channel=msg.channel or "commentary"))
        elif not text:
            continue  # an empty message streams no delta
        elif msg.channel == "final":
            out.append(AnswerDelta(text))
        elif msg.channel == "commentary":
            out.append(PreambleDelta(text))
        else:
            out.append(ReasoningDelta(text))
    return out


def _tool_call(recipient: str, raw: str, cut: bool) -> ToolCall:
    name = recipient.removeprefix("functions.")
    if recipient in BUILTIN_TOOL_NAMES and not cut:  # the built-in python takes code
        return ToolCall(name, {"code": raw}, raw)
    try:
        value: Any = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError:
        value = None
    if cut or not isinstance(value, dict):
        return ToolCall(name, {}, raw, "error")
    return ToolCall(name, value, raw)
