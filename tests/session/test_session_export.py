"""Export of a chat as Markdown (reasoning collapsible, stats per reply) and as JSON."""

from __future__ import annotations

import dataclasses
import json

from session_helpers import EXPECTED_MD, STATS, small_chat

from gptoss_local.events import ToolCall
from gptoss_local.session import export
from gptoss_local.session.history import History


def test_markdown_of_a_chat(history: History) -> None:
    chat_id = small_chat(history)
    text = export.to_markdown(history.get_chat(chat_id), history.messages(chat_id))
    assert text == EXPECTED_MD


def test_markdown_keeps_odd_text_inside_its_blocks(history: History) -> None:
    chat = history.create_chat()
    history.add_user_message(chat.id, "go")
    reply = history.begin_assistant_message(chat.id, effort="low")
    history.append_to_assistant(reply.id, reasoning="a </details> b", answer="Checking.")
    history.finish_assistant(reply.id, tool_calls=[ToolCall("run", {}, "{``` x", "bad JSON")])
    history.add_tool_message(chat.id, "run", "out ```` put")
    failed = history.begin_assistant_message(chat.id)
    history.fail_assistant(failed.id, "out of\nmemory")
    history.begin_assistant_message(chat.id)
    text = export.to_markdown(history.get_chat(chat.id), history.messages(chat.id))
    assert text.count("</details>") == 1 and "a &lt;/details> b" in text
    assert "**Tool call** `run`\n\n````json\n{``` x\n````" in text
    assert "## Tool `run`\n\n`````\nout ```` put\n`````" in text
    assert "*effort low · complete*" in text
    assert "*effort medium · failed: out of memory*" in text
    assert text.endswith("*effort medium · partial (interrupted)*\n")


def test_json_of_a_chat(history: History) -> None:
    chat_id = small_chat(history)
    doc = json.loads(export.to_json(history.get_chat(chat_id), history.messages(chat_id)))
    assert doc["format"] == "gptoss-local.chat" and doc["version"] == 1
    assert doc["chat"]["title"] == "Sky colour" and doc["chat"]["message_count"] == 2
    assert doc["chat"]["instructions"] == "Be brief.\n\nUse metric units."
    user, reply = doc["messages"]
    assert (user["role"], user["content"], user["stats"]) == ("user", "Why is the sky blue?", None)
    assert reply["reasoning"] == "Rayleigh scattering." and reply["status"] == "complete"
    assert reply["stats"] == dataclasses.asdict(STATS) and reply["effort"] == "high"
    assert reply["created_at"].startswith("2026-05-01T12:00:") and reply["tool_calls"] == []
