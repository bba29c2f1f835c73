"""The tool loop end to end on the real engine: the tiny model, grammar-steered, calls the built-in
python tool, the real worker runs the code, the result goes back as a Harmony message, and the
model (steered again) answers from it; the chat history keeps every step."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from engine_helpers import DATE, SEEDED, open_tiny
from tool_helpers import CALLS_PYTHON, Steered, ban, steered_turns

from gptoss_local.backends.base import ReplyRequest
from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
from gptoss_local.backends.llamacpp.options import LlamaOptions
from gptoss_local.config import Settings
from gptoss_local.conversation import Conversation, Message, Tool
from gptoss_local.events import AnswerDelta, ToolCall
from gptoss_local.harmony import render_prompt
from gptoss_local.session.export import to_markdown
from gptoss_local.session.history import History
from gptoss_local.tools import (
    Approvals,
    ChainEnded,
    HistoryRecorder,
    ReplyEnded,
    ToolCallApproved,
    ToolCallFinished,
    ToolLoop,
    ToolRegistry,
    open_tools,
)


@pytest.fixture(scope="module")
def backend(tiny_gguf: Path) -> Iterator[LlamaCppBackend]:
    with open_tiny(tiny_gguf) as loaded:
        yield loaded


def test_the_model_calls_python_reads_the_result_and_answers(
    backend: LlamaCppBackend, tmp_path: Path
) -> None:
    steered = steered_turns(backend)
    registry = open_tools_python_only()
    history = History(tmp_path / "history.sqlite3")
    try:
        chat = history.create_chat()
        history.add_user_message(chat.id, "What is 6*7?")
        conversation = history.to_conversation(chat.id, current_date=DATE)
        record = HistoryRecorder(history, chat.id)
        loop = ToolLoop(steered, registry, Approvals(["python"]))
        events = []
        for event in loop.run(loop.offer(ReplyRequest(conversation, SEEDED))):
            record(event)
            events.append(event)

        calls = [e for e in events if isinstance(e, ToolCall)]
        assert calls == [ToolCall("python", {"code": "print(6*7)"}, "print(6*7)", None, "analysis")]
        assert [e.how for e in events if isinstance(e, ToolCallApproved)] == ["allowed"]
        result = next(e for e in events if isinstance(e, ToolCallFinished))
        assert (result.output.content, result.output.error) == ("42\n", False)
        answer = "".join(e.text for e in events if isinstance(e, AnswerDelta))
        assert answer == "The answer is 42" and events[-1] == ChainEnded("answered")

        # The second turn's prompt: the python tool in the system message, this turn's
        # analysis kept, the call as harmony writes it, and the tool's answer.
        second = steered.seen[1]
        prompt = render_prompt(list(second.messages), builtin_tools=second.builtin_tools,
                               current_date=DATE)  # fmt: skip
        assert "# Tools\n\n## python\n\nUse this tool to execute Python code" in prompt
        assert prompt.endswith(
            "<|start|>user<|message|>What is 6*7?<|end|>"
            "<|start|>assistant<|channel|>analysis<|message|>Let me compute<|end|>"
            "<|start|>assistant to=python<|channel|>analysis code<|message|>print(6*7)<|call|>"
            "<|start|>python to=assistant<|channel|>analysis<|message|>42\n<|end|>"
            "<|start|>assistant"
        )
        # The engine kept the first turn's prompt and only evaluated what followed.
        turns = [e.stats for e in events if isinstance(e, ReplyEnded)]
        assert turns[0] is not None and turns[1] is not None
        assert turns[1].cached_tokens >= turns[0].prompt_tokens

        stored = history.messages(chat.id)
        assert [m.role for m in stored] == ["user", "assistant", "tool", "assistant"]
        assert stored[2].content == "42\n" and stored[3].content == "The answer is 42"
        markdown = to_markdown(history.get_chat(chat.id), stored)
        assert "```python\nprint(6*7)\n```" in markdown and "## Tool `python`" in markdown
        # Once the user writes again, the finished turn keeps only its answer.
        history.add_user_message(chat.id, "Thanks")
        later = history.to_conversation(chat.id, current_date=DATE)
        text = render_prompt(list(later.messages), current_date=DATE)
        assert "print(6*7)" not in text and "The answer is 42" in text
    finally:
        history.close()
        registry.close()


def open_tools_python_only() -> ToolRegistry:
    return open_tools(Settings(python_timeout=20), label="engine-test", mcp=False)


def test_run_without_tools_still_stops_at_a_function_call(backend: LlamaCppBackend) -> None:
    """A function from `run --tools` is offered but never run: the chain ends at its call."""
    grammar = CALLS_PYTHON.replace("analysis to=python code", "commentary to=functions.lookup")
    grammar = grammar.replace('"print(6*7)"', '"{}"')
    registry = ToolRegistry()
    registry.add_functions([Tool("lookup", "Looks up.")], "--tools t.json")
    options = LlamaOptions(grammar, ban(backend, "<|return|>", "<|endoftext|>"))
    loop = ToolLoop(Steered(backend, options), registry, Approvals())
    start = Conversation((Message("user", "find it"),), current_date=DATE)
    events = list(loop.run(loop.offer(ReplyRequest(start, SEEDED))))
    assert ToolCall("lookup", {}, "{}", None, "commentary") in events
    assert events[-1] == ChainEnded("external_call")
