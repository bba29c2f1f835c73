"""gpt-oss's built-in tools over our own engine: the client sends them in the field only our
engine reads, the engine renders the very prompt this process would (byte for byte, and the
same count of tokens), and the model's python call comes back as the `ToolCall` the in-process
engine makes; the code runs here, in the client's own python tool."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from engine_helpers import DATE, SEEDED
from serve_helpers import Running, Steering, running_server
from tool_helpers import steered_turns

from gptoss_local.backends.base import GenerationSettings, Reply, ReplyRequest
from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
from gptoss_local.backends.openai.backend import OpenAIClientBackend
from gptoss_local.config import Settings
from gptoss_local.conversation import BuiltinTool, Conversation, Message, Tool, ToolCallRecord
from gptoss_local.events import AnswerDelta, ToolCall
from gptoss_local.harmony import render_prompt
from gptoss_local.tools import Approvals, ChainEnded, ToolCallFinished, ToolLoop, open_tools

WEATHER = Tool("get_weather", "The weather in a city.", {"type": "object", "properties": {}})
SPAWN = Tool("spawn", "Start a helper.", {"type": "object", "properties": {}},
             namespace="agents", namespace_description="Helpers you can start.")  # fmt: skip
PYTHON = BuiltinTool("python", "Use this tool to execute Python code.")
SEARCH = Tool("search", "Search the notes.", {"type": "object", "properties": {}})
BROWSER = BuiltinTool("browser", "Reads your notes.", (SEARCH,))


class PythonTurns(Steering):
    """Turn one calls python with print(6*7), turn two answers "The answer is 42"; after them
    the usual steering. Every request the engine was asked is kept."""

    def __init__(self, backend: LlamaCppBackend) -> None:
        super().__init__(backend)
        self.turns = steered_turns(backend)
        self.requests: list[ReplyRequest] = []

    def __call__(self, request: ReplyRequest, cancel: threading.Event) -> Reply:
        self.requests.append(request)
        if self.turns.options:
            return self.turns.stream(request, cancel)
        return super().__call__(request, cancel)


class Recorded:
    """The client backend, keeping each request it streams."""

    def __init__(self, backend: OpenAIClientBackend) -> None:
        self.backend, self.capabilities = backend, backend.capabilities
        self.requests: list[ReplyRequest] = []

    def __getattr__(self, name: str) -> object:
        return getattr(self.backend, name)

    def stream(self, request: ReplyRequest, cancel: threading.Event | None = None) -> Reply:
        self.requests.append(request)
        return self.backend.stream(request, cancel)


@pytest.fixture(scope="module")
def served(tiny_gguf: Path) -> Iterator[Running]:
    with running_server(tiny_gguf, steer=PythonTurns) as running:
        yield running


def prompt(request: ReplyRequest) -> str:
    """The Harmony prompt of `request`, as the in-process engine renders it."""
    c = request.conversation
    return render_prompt(list(c.messages), effort=request.settings.effort,
                         instructions=c.instructions, tools=c.tools, current_date=c.current_date,
                         builtin_tools=c.builtin_tools)  # fmt: skip


def test_python_runs_here_over_the_engine_with_the_same_prompts(served: Running) -> None:
    steering = served.steering
    assert isinstance(steering, PythonTurns)
    steering.turns, steering.requests = steered_turns(steering.backend), []
    client = Recorded(OpenAIClientBackend(served.url))
    assert client.capabilities.builtin_tools  # our engine takes them
    registry = open_tools(Settings(python_timeout=20), label="engine-test", mcp=False)
    try:
        loop = ToolLoop(client, registry, Approvals(["python"]))  # type: ignore[arg-type]
        asked = Conversation((Message("user", "What is 6*7?"),), "Be brief.", current_date=DATE)
        events = list(loop.run(loop.offer(ReplyRequest(asked, SEEDED))))
    finally:
        registry.close()
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert calls == [ToolCall("python", {"code": "print(6*7)"}, "print(6*7)", None, "analysis")]
    result = next(e for e in events if isinstance(e, ToolCallFinished))
    assert (result.output.content, result.output.error) == ("42\n", False)  # run here
    answer = "".join(e.text for e in events if isinstance(e, AnswerDelta))
    assert answer == "The answer is 42" and events[-1] == ChainEnded("answered")
    # Each turn's prompt on the engine is the one this process renders from its own request.
    assert len(client.requests) == len(steering.requests) == 2
    for mine, engines in zip(client.requests, steering.requests, strict=True):
        assert prompt(engines) == prompt(mine)
    second = prompt(steering.requests[1])
    assert "# Tools\n\n## python\n\nUse this tool to execute Python code" in second
    assert second.endswith(
        "<|start|>assistant to=python<|channel|>analysis code<|message|>print(6*7)<|call|>"
        "<|start|>python to=assistant<|channel|>analysis<|message|>42\n<|end|>"
        "<|start|>assistant"
    )


def test_the_engine_renders_every_kind_of_tool_as_this_process_does(served: Running) -> None:
    steering = served.steering
    assert isinstance(steering, PythonTurns)
    steering.turns.options.clear()
    calls = (ToolCallRecord("python", {"code": "print(1)"}, "analysis"),
             ToolCallRecord("search", '{"query": "notes"}', "analysis", "browser"),
             ToolCallRecord("get_weather", {"city": "Oslo"}))  # fmt: skip
    history = (
        Message("user", "Look around."),
        Message("assistant", "Looking.", reasoning="I will look", tool_calls=calls),
        Message("tool", "1\n", tool_name="python"),
        Message("tool", "found notes.md", tool_name="search"),
        Message("tool", "rain", tool_name="get_weather"),
    )
    conversation = Conversation(history, "Be brief.", (WEATHER, SPAWN), DATE, (BROWSER, PYTHON))
    request = ReplyRequest(conversation, GenerationSettings(effort="high", max_tokens=2))
    client = OpenAIClientBackend(served.url)
    list(client.stream(request))
    engines = steering.requests[-1]
    assert engines.conversation.builtin_tools == (BROWSER, PYTHON)
    assert prompt(engines) == prompt(request)
    assert "to=browser.search<|channel|>analysis code" in prompt(engines)
    # The engine's count of the prompt's tokens is the in-process engine's.
    assert client.count_prompt(request) == steering.backend.count_prompt(request)
