"""The conversation of a Messages request: `system` and `messages` as Harmony messages.

`system` (a string or text blocks) becomes the instructions, and so does a message of role
"system" among the messages (Claude Code sends its environment so). A user message's text blocks
become a user message, and each `tool_result` block a tool message answering the call its
`tool_use_id` names (its content a string or text blocks; `is_error` is accepted, the error is
in the text). An assistant message's blocks become one assistant message: its text, its
`tool_use` blocks as calls (`input` an object), and the reasoning of its thinking blocks when
this server signed them (`thinking.recognised`); other thinking blocks and `redacted_thinking`
blocks are dropped, being no reasoning of this model's. `cache_control` and `citations` on a
block are accepted and ignored (Claude Code marks its prompt for Anthropic's cache; the
engine reuses cached prompts by itself). Images and documents are refused: gpt-oss reads text.
"""

from __future__ import annotations

import json
from typing import Any

from gptoss_local.conversation import Message, ToolCallRecord
from gptoss_local.harmony.names import ToolNames
from gptoss_local.serve.anthropic.thinking import recognised
from gptoss_local.serve.errors import bad_request
from gptoss_local.serve.fields import each_message

Block = dict[str, Any]
DROPPED = ("redacted_thinking",)


def instructions(system: Any) -> str | None:
    """The instructions `system` gives (None without any)."""
    if system is None:
        return None
    return _text(system, "system") or None


def conversation(items: Any, names: ToolNames) -> tuple[list[Message], list[str]]:
    """The messages of `messages` as Harmony messages, and the texts of its system messages
    (a 400 names what is wrong); tools by the model's names for them (`names`)."""
    messages: list[Message] = []
    system: list[str] = []
    calls: dict[str, str] = {}  # tool_use id -> the model's name of the tool

    def read(item: dict[str, Any], where: str) -> None:
        role, content = item.get("role"), item.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            raise bad_request("content must be a string or an array of blocks",
                              f"{where}.content")  # fmt: skip
        if role == "user":
            messages.extend(_user(blocks, f"{where}.content", calls))
        elif role == "assistant":
            messages.append(_assistant(blocks, f"{where}.content", calls, names))
        elif role == "system":
            system.append(_text(blocks, f"{where}.content"))
        else:
            raise bad_request(f"role must be user or assistant, not {role!r}", f"{where}.role")

    each_message(items, read, where="messages.{}")
    return messages, system


def _user(blocks: list[Any], where: str, calls: dict[str, str]) -> list[Message]:
    """Text runs as user messages, tool results as tool messages, in their order."""
    out: list[Message] = []
    texts: list[str] = []
    for number, block in enumerate(blocks):
        kind = _kind(block, f"{where}.{number}")
        if kind == "tool_result":
            if texts:
                out.append(Message("user", "\n\n".join(texts)))
                texts = []
            out.append(_result(block, f"{where}.{number}", calls))
        elif kind == "text":
            texts.append(_block_text(block, f"{where}.{number}"))
        else:
            _refuse(kind, f"{where}.{number}", "a user message")
    if texts:
        out.append(Message("user", "\n\n".join(texts)))
    return out


def _result(block: Block, where: str, calls: dict[str, str]) -> Message:
    if not isinstance(block.get("is_error", False), bool):
        raise bad_request("is_error must be true or false", f"{where}.is_error")
    content = block.get("content")
    text = "" if content is None else _text(content, f"{where}.content")
    return Message("tool", text, tool_name=calls.get(str(block.get("tool_use_id"))))


def _assistant(blocks: list[Any], where: str, calls: dict[str, str], names: ToolNames) -> Message:
    reasoning, texts, records = [], [], []
    for number, block in enumerate(blocks):
        at = f"{where}.{number}"
        kind = _kind(block, at)
        if kind == "text":
            texts.append(_block_text(block, at))
        elif kind == "thinking":
            found = recognised(block)
            if found is not None:
                reasoning.append(found)
        elif kind == "tool_use":
            records.append(_call(block, at, calls, names))
        elif kind not in DROPPED:
            _refuse(kind, at, "an assistant message")
    return Message("assistant", "".join(texts), reasoning="".join(reasoning),
                   tool_calls=tuple(records))  # fmt: skip


def _call(block: Block, where: str, calls: dict[str, str], names: ToolNames) -> ToolCallRecord:
    name, arguments = block.get("name"), block.get("input", {})
    if not isinstance(name, str) or not isinstance(arguments, dict):
        raise bad_request("a tool_use block needs a name and an input object", where)
    model = calls[str(block.get("id"))] = names.model(name)
    return ToolCallRecord(model, json.dumps(arguments, ensure_ascii=False))


def _text(content: Any, where: str) -> str:
    """A string, or the text of an array of text blocks."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise bad_request("must be a string or an array of text blocks", where)
    texts = []
    for number, block in enumerate(content):
        kind = _kind(block, f"{where}.{number}")
        if kind != "text":
            _refuse(kind, f"{where}.{number}", "text")
        texts.append(_block_text(block, f"{where}.{number}"))
    return "\n\n".join(texts)


def _kind(block: Any, where: str) -> str:
    kind = block.get("type") if isinstance(block, dict) else None
    if not isinstance(kind, str):
        raise bad_request("each content block must be an object with a type", where)
    return kind


def _block_text(block: Block, where: str) -> str:
    text = block.get("text")
    if not isinstance(text, str):
        raise bad_request("a text block needs text", f"{where}.text")
    return text


def _refuse(kind: str, where: str, what: str) -> None:
    reads = " gpt-oss reads text only." if kind in ("image", "document") else ""
    raise bad_request(f"{kind} blocks are not supported in {what} here.{reads}", where)
