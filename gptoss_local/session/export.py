"""A chat as Markdown (to read or share) or JSON (to process), from stored records only.

Markdown keeps each reply's reasoning in a collapsible ``<details>`` block and ends each reply with
its stats line: tokens, time to first token, tokens/s, effort and status. `write_private` writes
an export as `chats export -o FILE` and the chat's Export action (Ctrl+S) do.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gptoss_local.conversation import Citation, file_link
from gptoss_local.events import ToolCall
from gptoss_local.session.records import Chat, Compaction, StoredMessage, call_to_dict

EXPORT_FORMAT = "gptoss-local.chat"
EXPORT_VERSION = 1
_STATUS_TEXT = {"partial": "partial (interrupted)", "stopped": "stopped", "complete": "complete"}


def chat_to_dict(chat: Chat) -> dict[str, Any]:
    """A chat's fields as JSON-ready values (times as ISO 8601 text)."""
    data = dataclasses.asdict(chat)
    data["created_at"], data["updated_at"] = (
        chat.created_at.isoformat(),
        chat.updated_at.isoformat(),
    )
    return data


def message_to_dict(message: StoredMessage) -> dict[str, Any]:
    """A message's fields as JSON-ready values; `stats` is the `Stats` dataclass as a dict."""
    return {
        "id": message.id,
        "seq": message.seq,
        "role": message.role,
        "status": message.status,
        "content": message.content,
        "reasoning": message.reasoning,
        "tool_calls": [call_to_dict(call) for call in message.tool_calls],
        "tool_name": message.tool_name,
        "effort": message.effort,
        "stats": dataclasses.asdict(message.stats) if message.stats else None,
        "error": message.error,
        "created_at": message.created_at.isoformat(),
        "updated_at": message.updated_at.isoformat(),
        "attachments": [dataclasses.asdict(attached) for attached in message.attachments],
        "citations": [dataclasses.asdict(citation) for citation in message.citations],
    }


def compaction_to_dict(compaction: Compaction) -> dict[str, Any]:
    """A compaction's fields as JSON-ready values."""
    data = dataclasses.asdict(compaction)
    data["created_at"] = compaction.created_at.isoformat()
    return data


def to_json(
    chat: Chat, messages: Sequence[StoredMessage], compactions: Sequence[Compaction] = ()
) -> str:
    """The chat, its messages and its compactions as one indented JSON document (ends with a
    newline)."""
    doc = {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "chat": chat_to_dict(chat),
        "messages": [message_to_dict(message) for message in messages],
        "compactions": [compaction_to_dict(compaction) for compaction in compactions],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def to_markdown(
    chat: Chat, messages: Sequence[StoredMessage], compactions: Sequence[Compaction] = ()
) -> str:
    """The chat as a Markdown document (ends with a newline); each compaction is a marker
    before the first message its prompts kept, with its summary folded."""
    title = " ".join(chat.title.split()) or f"Chat {chat.id}"
    model = chat.model or "unknown model"
    if chat.backend:
        model += f" ({chat.backend})"
    parts = [
        f"# {title}",
        f"Chat {chat.id} · {model} · effort {chat.effort} · created {_when(chat.created_at)}"
        f" · updated {_when(chat.updated_at)}",
    ]
    if chat.instructions:
        quoted = "\n".join(f"> {line}".rstrip() for line in chat.instructions.splitlines())
        parts.append(f"> **Instructions**\n>\n{quoted}")
    markers = {c.before_seq: c for c in compactions}
    for message in messages:
        if message.seq in markers:
            parts.append(compaction_markdown(markers.pop(message.seq)))
        parts.append(_message_markdown(message))
    parts += [compaction_markdown(left) for left in markers.values()]
    return "\n\n".join(parts) + "\n"


def compaction_line(compaction: Compaction) -> str:
    """What a compaction did, in one line ("12 earlier messages summarised · …")."""
    count = compaction.messages_left_out
    if compaction.summary:
        head = f"{count:,} earlier messages summarised"
        cost = f"summary of {compaction.summary_tokens:,} tokens in {compaction.seconds:.1f} s"
        items = [head, f"the prompt was {compaction.prompt_tokens_before:,} tokens", cost]
    else:
        items = [f"{count:,} earlier messages left out of the prompts (no summary)"]
    return " · ".join(items)


def compaction_markdown(compaction: Compaction) -> str:
    """A compaction as a Markdown marker, its summary in a collapsible block."""
    parts = [f"---\n\n*{compaction_line(compaction)}*"]
    if compaction.summary:
        summary = re.sub(r"</(details)", r"&lt;/\1", compaction.summary, flags=re.IGNORECASE)
        parts.append(f"<details><summary>Summary</summary>\n\n{summary}\n\n</details>")
    return "\n\n".join([*parts, "---"])


def _message_markdown(message: StoredMessage) -> str:
    if message.role == "user":
        parts = [f"## User\n\n{message.content}"]
        for attached in message.attachments:
            line = (f"**Attached** `{attached.name}` ({attached.kind}, {attached.tokens:,} "
                    f"tokens, sha256 {attached.sha256[:12]}…, from {attached.path})")  # fmt: skip
            text = re.sub(r"</(details)", r"&lt;/\1", attached.text, flags=re.IGNORECASE)
            parts.append(f"{line}\n\n<details><summary>As sent</summary>\n\n{text}\n\n</details>")
        return "\n\n".join(parts)
    if message.role == "tool":
        return f"## Tool `{message.tool_name or 'unknown'}`\n\n{_fence(message.content, '')}"
    parts = ["## Assistant"]
    if message.reasoning:
        # A literal </details> in the reasoning would close the block early.
        reasoning = re.sub(r"</(details)", r"&lt;/\1", message.reasoning, flags=re.IGNORECASE)
        parts.append(f"<details><summary>Reasoning</summary>\n\n{reasoning}\n\n</details>")
    if message.content:
        parts.append(linked(message.content, message.citations))
    if message.citations:
        cited = [f"- {c.marker} [{c.label}]({file_link(c)})" for c in message.citations]
        parts.append("**Sources**\n\n" + "\n".join(cited))
    for call in message.tool_calls:
        parts.append(f"**Tool call** `{call.name}`\n\n{_call_body(call)}")
    parts.append(f"*{stats_line(message)}*")
    return "\n\n".join(parts)


def linked(text: str, citations: Sequence[Citation]) -> str:
    """`text` with each citation the model wrote (``【3†L10-L15】``) turned into a Markdown
    link to the file and lines it cites (``[notes/a.md:10-15](file:///…#L10)``)."""
    for citation in citations:
        text = text.replace(citation.marker, f"[{citation.label}]({file_link(citation)})")
    return text


def _call_body(call: ToolCall) -> str:
    code = call.arguments.get("code")
    if call.name == "python" and not call.error and isinstance(code, str):
        return _fence(code, "python")  # the built-in python tool's argument is its code
    body = call.raw if call.error else json.dumps(call.arguments, indent=2, ensure_ascii=False)
    return _fence(body, "json")


def stats_line(message: StoredMessage) -> str:
    """One line of a reply's stats, e.g. "812 tokens · TTFT 0.21 s · 245.3 tokens/s · …"."""
    items: list[str] = []
    stats = message.stats
    if stats is not None:
        tokens = f"{stats.generated_tokens:,} tokens"
        if stats.reasoning_tokens or stats.answer_tokens:
            tokens += f" ({stats.reasoning_tokens:,} reasoning, {stats.answer_tokens:,} answer)"
        items.append(tokens)
        if stats.ttft_seconds is not None:
            items.append(f"TTFT {stats.ttft_seconds:.2f} s")
        if stats.decode_tokens_per_second is not None:
            items.append(f"{stats.decode_tokens_per_second:.1f} tokens/s")
    if message.effort:
        items.append(f"effort {message.effort}")
    status = _STATUS_TEXT.get(message.status, message.status)
    if message.status == "failed":
        status = f"failed: {' '.join(message.error.split())}" if message.error else "failed"
    items.append(status)
    return " · ".join(items)


def _fence(text: str, language: str) -> str:
    # A fence longer than any backtick run inside, so the text cannot end the block.
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"


def _when(when: dt.datetime) -> str:
    return when.astimezone(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def write_private(output: Path, text: str) -> None:
    """Write an export to `output`, readable by its owner only; raises OSError.

    A chat is private: also where it replaces an older, looser file. A temporary file (mkstemp
    makes it 0600) in the same folder is synced and renamed over `output`, so a failure halfway
    leaves the old file whole. Something other than a file (/dev/stdout, a pipe) is written
    straight into.
    """
    import tempfile  # deferred: only writing an export needs it

    if output.exists() and not output.is_file():
        with output.open("w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        return
    fd, temp = tempfile.mkstemp(prefix=f".{output.name}.", suffix=".tmp", dir=output.parent)
    try:
        with open(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, output)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
