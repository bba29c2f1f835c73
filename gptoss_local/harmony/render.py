"""Render a conversation as the exact Harmony prompt text gpt-oss was trained on.

Layout follows openai/harmony's renderer (src/encoding.rs) and its test data; the output
ends with ``<|start|>assistant`` so the model writes the next assistant turn. The messages and
tools are `gptoss_local.conversation`'s; this module only decides how they are written.

openai-harmony has no freeform tools (a tool whose input is raw text, `Tool.text_input`): one
is written in its namespace as a function of one string, ``type NAME = (_: string) => any;``,
after comment lines that say its input is plain text and show its grammar (shown, not
enforced); its calls in the history are that text, without ``<|constrain|>json``.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Sequence
from typing import Any

from gptoss_local.conversation import (
    BUILTIN_NAMESPACES,
    BUILTIN_TOOL_NAMES,
    FUNCTIONS,
    BuiltinTool,
    Message,
    TextInput,
    Tool,
    ToolCallRecord,
)
from gptoss_local.harmony import schema
from gptoss_local.harmony.neutralise import neutralise
from gptoss_local.kinds import EFFORTS

MODEL_IDENTITY = "You are ChatGPT, a large language model trained by OpenAI."
# An answer's format as the prompt shows it: its name, a description, and its JSON schema.
ResponseFormatText = tuple[str, str, dict[str, Any]]


def render_prompt(
    messages: Iterable[Message],
    *,
    effort: str = "medium",
    instructions: str | None = None,
    tools: Iterable[Tool] = (),
    current_date: dt.date | None = None,
    knowledge_cutoff: str = "2024-06",
    keep_past_tool_calls: bool = False,
    builtin_tools: Iterable[BuiltinTool] = (),
    response_format: ResponseFormatText | None = None,
) -> str:
    """Render the prompt for the next assistant turn.

    Args:
        messages: The conversation so far (user, assistant and tool messages).
        effort: Reasoning effort, "low", "medium" or "high".
        instructions: The user's "system prompt"; goes into the developer message.
        tools: Tools offered to the model: functions, and freeform tools (raw text input).
        current_date: Date shown to the model; today when omitted.
        knowledge_cutoff: The model's knowledge cutoff as written in the system message.
        keep_past_tool_calls: Also keep tool calls and results of finished turns (their
            reasoning is dropped either way). Off by default to keep prompts short.
        builtin_tools: Built-in tools offered (the python tool), described in the system
            message.
        response_format: The answer's format as (name, description, JSON schema), written at
            the end of the developer message under "# Response Formats", as Harmony's format
            guide lays it out: the model reasons knowing the shape it must answer in.

    Returns:
        Harmony text ending with ``<|start|>assistant``.

    Raises:
        ValueError: On an unknown effort, duplicate tool names, a tool message that answers
            no call, or a message with attachments: they are refused, not left out, since
            Harmony has no place for files yet and a reply must not ignore what the user gave
            (`Capabilities.attachments` is False for every engine that renders Harmony).
    """
    if effort not in EFFORTS:
        raise ValueError(f"effort must be one of {', '.join(EFFORTS)}; got {effort!r}")
    tools = tuple(tools)
    names = [_recipient(tool.namespace, tool.name) for tool in tools]
    if len(set(names)) != len(names):
        raise ValueError(f"tool names must be unique in their namespace; got {names}")
    builtins = tuple(builtin_tools)
    if len({b.name for b in builtins}) != len(builtins):
        raise ValueError("each built-in tool may be offered once")
    history = list(messages)
    attached = next((m for m in history if m.attachments), None)
    if attached is not None:
        files = ", ".join(a.name for a in attached.attachments)
        raise ValueError(f"a {attached.role} message has attachments ({files}): gpt-oss's "
                         "prompt cannot hold files yet")  # fmt: skip
    date = current_date or dt.date.today()
    functions = any(tool.namespace == FUNCTIONS for tool in tools)
    system = _system_body(effort, date, knowledge_cutoff, functions, builtins)
    parts = [_message("system", system)]
    if instructions or tools or response_format:
        body = _developer_body(instructions, tools, response_format)
        parts.append(_message("developer", body))
    freeform = frozenset(name for name, t in zip(names, tools, strict=True) if t.text_input)
    parts.extend(_history(history, keep_past_tool_calls, freeform))
    parts.append("<|start|>assistant")
    return "".join(parts)


def _message(header: str, body: str, end: str = "<|end|>") -> str:
    # Headers are built from validated names only; every body is neutralised here, in one
    # place, so no caller can forget it.
    return f"<|start|>{header}<|message|>{neutralise(body)}{end}"


def _system_body(
    effort: str, date: dt.date, cutoff: str, has_tools: bool, builtins: Sequence[BuiltinTool]
) -> str:
    body = (
        f"{MODEL_IDENTITY}\nKnowledge cutoff: {cutoff}\nCurrent date: {date:%Y-%m-%d}\n\n"
        f"Reasoning: {effort}\n\n"
    )
    if builtins:
        # openai-harmony keeps the system message's tools in a map ordered by name.
        ordered = sorted(builtins, key=lambda b: b.name)
        body += "# Tools\n\n" + "".join(f"{_builtin(b)}\n\n" for b in ordered)
    body += (
        "# Valid channels: analysis, commentary, final. Channel must be included for every message."
    )
    if has_tools:
        body += "\nCalls to these tools must go to the commentary channel: 'functions'."
    return body


def _builtin(tool: BuiltinTool) -> str:
    """python: its description as it is; the browser: a namespace of its functions, with its
    description as the namespace's comment (openai-harmony's browser config)."""
    if not tool.functions:
        return f"## {tool.name}\n\n{tool.description}"
    return _namespace(tool.name, tool.functions, tool.description)


def _developer_body(
    instructions: str | None, tools: Sequence[Tool], response_format: ResponseFormatText | None
) -> str:
    sections = ["# Instructions", instructions] if instructions else []
    if tools:
        # openai-harmony keeps namespaces in a map ordered by name.
        spaces = sorted({tool.namespace for tool in tools})
        found = [_namespace(space, [t for t in tools if t.namespace == space]) for space in spaces]
        sections.append("# Tools\n\n" + "\n\n".join(found))
    if response_format:
        name, description, shape = response_format
        described = [f"// {line}" for line in description.splitlines()]
        compact = json.dumps(shape, ensure_ascii=False, separators=(",", ":"))
        lines = ["# Response Formats", "", f"## {name}", "", *described, compact]
        sections.append("\n".join(lines))
    return "\n\n".join(sections)


def _namespace(name: str, tools: Sequence[Tool], described: str = "") -> str:
    described = described or next(
        (t.namespace_description for t in tools if t.namespace_description), ""
    )
    lines = [f"## {name}", "", *(f"// {line}" for line in described.splitlines())]
    lines += [f"namespace {name} {{", ""]
    for tool in tools:
        lines += [f"// {line}" for line in schema.lines(tool.description)]
        if tool.text_input is None:
            lines += [f"type {tool.name} = {schema.signature(tool.parameters)};", ""]
        else:
            lines += [f"// {line}" for line in _text_input(tool.text_input)]
            lines += [f"type {tool.name} = (_: string) => any;", ""]
    lines.append(f"}} // namespace {name}")
    return "\n".join(lines)


def _text_input(text: TextInput) -> list[str]:
    """What a freeform tool's description says besides: its input is the raw text, and the
    grammar it follows, if any. gpt-oss writes JSON to functions unless told otherwise."""
    lines = ["Its input is plain text, not JSON: write the text itself as the message, not "
             "wrapped in quotes or an object."]  # fmt: skip
    if text.syntax == "regex":
        lines.append("The text matches this regular expression:")
    elif text.syntax != "text":
        lines.append(f"The text follows this {text.syntax} grammar:")
    return lines + schema.lines(text.definition)


def _history(messages: list[Message], keep_past_calls: bool, freeform: frozenset[str]) -> list[str]:
    """Split off the turn in progress (after the last user message, still calling tools);
    `freeform`: the recipients of the freeform tools, whose calls are raw text."""
    last_user = max((i for i, m in enumerate(messages) if m.role == "user"), default=-1)
    tail = messages[last_user + 1 :]
    replies = [m for m in tail if m.role == "assistant"]
    if not (replies and replies[-1].tool_calls):
        return _render(messages, freeform, keep_reasoning=False, keep_calls=keep_past_calls)
    # The chain of calls is unfinished: dropping its reasoning breaks chained tool use.
    done = messages[: last_user + 1]
    kept = _render(done, freeform, keep_reasoning=False, keep_calls=keep_past_calls)
    return kept + _render(tail, freeform, keep_reasoning=True, keep_calls=True)


def _render(
    messages: Sequence[Message], freeform: frozenset[str], *, keep_reasoning: bool, keep_calls: bool
) -> list[str]:
    out: list[str] = []
    unanswered: list[ToolCallRecord] = []
    for msg in messages:
        if msg.role == "user":
            out.append(_message("user", msg.content))
        elif msg.role == "tool":
            call = _answered_call(msg, unanswered)
            if keep_calls:
                author = _author(call)
                header = f"{author} to=assistant<|channel|>{call.channel}"
                out.append(_message(header, msg.content))
        else:
            if keep_reasoning and msg.reasoning:
                out.append(_message("assistant<|channel|>analysis", msg.reasoning))
            if not msg.tool_calls:
                if msg.content:
                    out.append(_message("assistant<|channel|>final", msg.content))
                continue
            unanswered += msg.tool_calls
            if keep_calls:
                if msg.content:
                    out.append(_message("assistant<|channel|>commentary", msg.content))
                out += [_call(call, freeform) for call in msg.tool_calls]
    return out


def _answered_call(msg: Message, unanswered: list[ToolCallRecord]) -> ToolCallRecord:
    """The call a tool message answers: the oldest unanswered one of its name (or the oldest
    of all when it has none); a result nobody asked for is answered on the usual channel."""
    name = msg.tool_name or (unanswered[0].name if unanswered else None)
    if name is None:
        raise ValueError("a tool message needs tool_name when it follows no unanswered tool call")
    for call in unanswered:
        if call.name == name:
            unanswered.remove(call)
            return call
    return ToolCallRecord(name, channel="analysis" if name in BUILTIN_TOOL_NAMES else "commentary")


def _author(call: ToolCallRecord) -> str:
    # python is addressed by its bare name, other tools (the browser's too) within their
    # namespace.
    return call.name if _is_python(call) else _recipient(call.namespace, call.name)


def _is_python(call: ToolCallRecord) -> bool:
    return call.name in BUILTIN_TOOL_NAMES and call.namespace not in BUILTIN_NAMESPACES


def _recipient(namespace: str, name: str) -> str:
    return f"{namespace}.{name}"


def _call(call: ToolCallRecord, freeform: frozenset[str]) -> str:
    # Recipient in the role part, then the content type (`code` for the python tool and for
    # the browser, whose calls gpt-oss writes as ``to=browser.search code``; `<|constrain|>json`
    # for functions, none for a freeform tool's raw text), as harmony's current renderer writes
    # it; a call ends with <|call|>, not <|end|>, in history too.
    args = call.arguments
    if _is_python(call):
        code = args.get("code") if isinstance(args, dict) else args
        text = code if isinstance(code, str) else json.dumps(args, ensure_ascii=False)
        header = f"assistant to={call.name}<|channel|>{call.channel} code"
    elif call.namespace in BUILTIN_NAMESPACES:
        text = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
        to = _recipient(call.namespace, call.name)
        header = f"assistant to={to}<|channel|>{call.channel} code"
    else:
        text = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
        to = _recipient(call.namespace, call.name)
        kind = "" if to in freeform else " <|constrain|>json"
        header = f"assistant to={to}<|channel|>{call.channel}{kind}"
    return _message(header, text, end="<|call|>")
