"""The browser end to end on the real engine: the tiny model, grammar-steered, searches the
index, opens the first result, and answers citing a line of it; the tool loop runs the real
browser, the citation resolves to the file and its line, and the history, both exports and
`run`'s output (text and JSON lines) keep it."""

from __future__ import annotations

import json
from argparse import Namespace
from collections.abc import Iterator
from pathlib import Path

import pytest
from engine_helpers import DATE, SEEDED, open_tiny
from library_helpers import CITED_ANSWER, write_corpus
from tool_browser_steer import browsing_turns

from gptoss_local.backends.base import ReplyRequest
from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
from gptoss_local.commands import run as run_command
from gptoss_local.config import Settings
from gptoss_local.conversation import Citation, Conversation, Message
from gptoss_local.events import ToolCall
from gptoss_local.harmony import render_prompt
from gptoss_local.session.export import to_json, to_markdown
from gptoss_local.session.history import History
from gptoss_local.tools import (
    Approvals,
    ChainEnded,
    HistoryRecorder,
    ReplyEnded,
    ToolCallFinished,
    ToolLoop,
    ToolRegistry,
    open_tools,
)


@pytest.fixture(scope="module")
def backend(tiny_gguf: Path) -> Iterator[LlamaCppBackend]:
    # The browser's declaration and its pages take more than the usual 2,048 tokens.
    with open_tiny(tiny_gguf, context=8192) as loaded:
        yield loaded


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    return write_corpus(tmp_path / "notes", 20)


@pytest.fixture
def registry(notes: Path) -> Iterator[ToolRegistry]:
    settings = Settings(docs=(str(notes),))
    opened = open_tools(settings, label="t", python=False, mcp=False, browser=True)
    assert opened.problems == []
    yield opened
    opened.close()


def test_search_open_and_answer_with_a_citation(
    backend: LlamaCppBackend, registry: ToolRegistry, notes: Path, tmp_path: Path
) -> None:
    steered = browsing_turns(backend)
    history = History(tmp_path / "history.sqlite3")
    try:
        chat = history.create_chat()
        history.add_user_message(chat.id, "Why do zebras have stripes?")
        conversation = history.to_conversation(chat.id, current_date=DATE)
        record = HistoryRecorder(history, chat.id)
        events = []
        loop = ToolLoop(steered, registry, Approvals(["browser"]))
        for event in loop.run(loop.offer(ReplyRequest(conversation, SEEDED))):
            record(event)
            events.append(event)

        calls = [e for e in events if isinstance(e, ToolCall)]
        assert [(c.name, c.arguments, c.channel) for c in calls] == [
            ("browser.search", {"query": "zebra stripes"}, "analysis"),
            ("browser.open", {"id": 0}, "analysis"),
        ]
        results = [e.output.content for e in events if isinstance(e, ToolCallFinished)]
        assert results[0].startswith("[0] zebra stripes\n**viewing lines [0 - ")
        assert "【0†Zebra stripes†notes/notes/zebras.md】" in results[0]
        assert results[1].startswith("[1] Zebra stripes (notes/notes/zebras.md)")
        assert "L3: Zebras have stripes that deter biting flies" in results[1]
        assert events[-1] == ChainEnded("answered")
        zebra = Citation("【1†L3】", str(notes / "notes" / "zebras.md"), "notes/notes/zebras.md",
                         4, 4)  # fmt: skip
        last = [e for e in events if isinstance(e, ReplyEnded)][-1]
        assert (last.message.content, last.citations) == (CITED_ANSWER, (zebra,))

        # The third turn's prompt: the browser in the system message, the chain as harmony
        # writes it (calls ``to=browser.* code``, results from ``browser.*``).
        third = steered.seen[2]
        prompt = render_prompt(list(third.messages), builtin_tools=third.builtin_tools,
                               current_date=DATE)  # fmt: skip
        assert "# Tools\n\n## browser\n\n// Tool for browsing." in prompt
        assert (
            '<|start|>assistant to=browser.search<|channel|>analysis code<|message|>{"query": '
            '"zebra stripes"}<|call|><|start|>browser.search to=assistant<|channel|>analysis'
            "<|message|>[0] zebra stripes"
        ) in prompt
        assert (
            '<|start|>assistant to=browser.open<|channel|>analysis code<|message|>{"id": 0}'
            in prompt
        )

        stored = history.messages(chat.id)
        assert [m.role for m in stored] == ["user", "assistant", "tool", "assistant", "tool",
                                            "assistant"]  # fmt: skip
        assert stored[2].tool_name == "browser.search" and stored[-1].citations == (zebra,)
        markdown = to_markdown(history.get_chat(chat.id), stored)
        link = f"[notes/notes/zebras.md:4]({Path(zebra.path).as_uri()}#L4)"
        assert f"Their stripes deter biting flies {link}." in markdown
        assert "**Sources**" in markdown and "## Tool `browser.open`" in markdown
        exported = json.loads(to_json(history.get_chat(chat.id), stored))
        assert exported["messages"][-1]["citations"] == [
            {"marker": "【1†L3】", "path": zebra.path, "name": zebra.name, "first_line": 4,
             "last_line": 4}
        ]  # fmt: skip
        # The stored chain goes back to the model as it was (the browser's calls included).
        history.add_user_message(chat.id, "And lions?")
        later = history.to_conversation(chat.id, current_date=DATE)
        again = render_prompt(list(later.messages), current_date=DATE, keep_past_tool_calls=True,
                              builtin_tools=third.builtin_tools)  # fmt: skip
        assert again.count("to=browser.") == 2
    finally:
        history.close()


def _run(backend: LlamaCppBackend, registry: ToolRegistry, json_lines: bool) -> int:
    """run's loop and writer on the steered tiny model (the CLI cannot steer it)."""
    args = Namespace(json=json_lines, show_reasoning=False)
    conversation = registry.offer(Conversation((Message("user", "zebras?"),), current_date=DATE))
    loop = ToolLoop(browsing_turns(backend), registry, Approvals(["browser"]))
    return run_command._stream(loop, ReplyRequest(conversation, SEEDED), args)


def test_run_prints_the_answer_and_its_sources(
    backend: LlamaCppBackend,
    registry: ToolRegistry,
    notes: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert _run(backend, registry, json_lines=False) == 0
    out, err = capsys.readouterr()
    assert out == CITED_ANSWER + "\n"
    zebra = notes / "notes" / "zebras.md"
    assert f"[source] 【1†L3】 notes/notes/zebras.md:4 {zebra.as_uri()}#L4" in err
    assert '[tool call] browser.search {"query": "zebra stripes"}' in err


def test_run_json_lines_hold_the_citations(
    backend: LlamaCppBackend,
    registry: ToolRegistry,
    notes: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert _run(backend, registry, json_lines=True) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    kinds = [r["type"] for r in records]
    assert kinds.count("tool_call") == 2 and kinds[-2:] == ["citations", "done"]
    (citation,) = records[-2]["citations"]
    assert citation["path"] == str(notes / "notes" / "zebras.md") and citation["first_line"] == 4
