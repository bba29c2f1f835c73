"""The tool loop on a scripted backend: approvals, results fed back as Harmony messages (the
turn's analysis kept while the chain runs), the per-reply limit, the ways a chain ends, and the
history it leaves (and exports)."""

from __future__ import annotations

import threading
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from gptoss_local.backends.base import (
    Capabilities,
    GenerationSettings,
    Reply,
    ReplyRequest,
    ResponseFormat,
    Stats,
    ToolChoice,
    UnsupportedRequest,
)
from gptoss_local.conversation import (
    AssistantDraft,
    Attachment,
    BuiltinTool,
    Conversation,
    Message,
    Tool,
    ToolCallRecord,
)
from gptoss_local.events import Event, PreambleDelta, ReasoningDelta, ToolCall, TurnEnded
from gptoss_local.harmony import render_prompt
from gptoss_local.session.export import to_json, to_markdown
from gptoss_local.session.history import History
from gptoss_local.tools import (
    Approvals,
    ChainEnded,
    HistoryRecorder,
    LoopEvent,
    ToolCallApproved,
    ToolCallDenied,
    ToolCallFinished,
    ToolCallRequested,
    ToolInfo,
    ToolLoop,
    ToolOutput,
    ToolRegistry,
)

ADD = Tool("add", "Adds two numbers.", {"type": "object", "properties": {
    "a": {"type": "number"}, "b": {"type": "number"}}})  # fmt: skip


def call(name: str = "add", raw: str = '{"a": 2, "b": 3}', why: str = "Need a sum.") -> list[Event]:
    """A turn that thinks, then calls `name`."""
    from gptoss_local.harmony import parse_completion

    return parse_completion(
        f"<|channel|>analysis<|message|>{why}<|end|><|start|>assistant"
        f"<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>{raw}<|call|>"
    )


def answer(text: str = "It is 5.") -> list[Event]:
    return [ReasoningDelta("Got it."), *_final(text)]


def _final(text: str) -> list[Event]:
    from gptoss_local.events import AnswerDelta

    return [AnswerDelta(text), TurnEnded("return")]


class Scripted:
    """A backend that plays back turns and keeps every conversation it was given."""

    capabilities = Capabilities(tools=True, builtin_tools=True)

    def __init__(self, *turns: list[Event]) -> None:
        self.turns = list(turns)
        self.seen: list[Conversation] = []
        self.asked: list[ReplyRequest] = []

    def stream(self, request: ReplyRequest, cancel: threading.Event | None = None) -> Reply:
        self.seen.append(request.conversation)
        self.asked.append(request)
        events = self.turns.pop(0)

        def play() -> Generator[Event, None, Stats]:
            yield from events
            ended = [e for e in events if isinstance(e, TurnEnded)]
            reason = "call" if ended and ended[-1].reason == "call" else "return"
            if cancel is not None and cancel.is_set():
                reason = "cancelled"
            return Stats(generated_tokens=len(events), stop_reason=reason)  # type: ignore[arg-type]

        return Reply(play())

    def prompt(self, index: int) -> str:
        c = self.seen[index]
        return render_prompt(list(c.messages), tools=c.tools, builtin_tools=c.builtin_tools,
                             current_date=None)  # fmt: skip


def adder(log: list[dict[str, Any]] | None = None) -> ToolRegistry:
    registry = ToolRegistry()

    def run(arguments: dict[str, Any], cancel: threading.Event | None) -> ToolOutput:
        if log is not None:
            log.append(arguments)
        return ToolOutput(str(arguments["a"] + arguments["b"]))

    registry.add_function(ADD, run, source="test")
    return registry


def run_loop(backend: Scripted, registry: ToolRegistry, approvals: Approvals,
             **options: Any) -> list[LoopEvent]:  # fmt: skip
    loop = ToolLoop(backend, registry, approvals, **options)
    start = Conversation((Message("user", "What is 2+3?"),))
    return list(loop.run(loop.offer(ReplyRequest(start, GenerationSettings()))))


def kinds(events: list[LoopEvent]) -> list[str]:
    return [type(e).__name__ for e in events if not isinstance(e, (ReasoningDelta,))]


def test_an_allowed_call_runs_and_the_reply_continues() -> None:
    backend, calls = Scripted(call(), answer()), []
    events = run_loop(backend, adder(calls), Approvals(["add"]))
    assert calls == [{"a": 2, "b": 3}]
    assert kinds(events) == [
        "ToolCall", "TurnEnded", "ReplyEnded", "ToolCallRequested", "ToolCallApproved",
        "ToolCallFinished", "AnswerDelta", "TurnEnded", "ReplyEnded", "ChainEnded",
    ]  # fmt: skip
    finished = next(e for e in events if isinstance(e, ToolCallFinished))
    assert finished.output.content == "5" and finished.seconds >= 0
    assert events[-1] == ChainEnded("answered")
    # The second turn sees the call, with this turn's analysis kept, and the result.
    second = backend.prompt(1)
    assert second.endswith(
        "<|start|>user<|message|>What is 2+3?<|end|>"
        "<|start|>assistant<|channel|>analysis<|message|>Need a sum.<|end|>"
        "<|start|>assistant to=functions.add<|channel|>commentary <|constrain|>json"
        '<|message|>{"a": 2, "b": 3}<|call|>'
        "<|start|>functions.add to=assistant<|channel|>commentary<|message|>5<|end|>"
        "<|start|>assistant"
    )
    assert "type add = (_: {" in second  # offered as a function


@pytest.mark.parametrize(("answer_", "runs"), [("once", True), ("always", True), ("deny", False)])
def test_the_user_is_asked(answer_: str, runs: bool) -> None:
    asked: list[tuple[ToolCall, ToolInfo]] = []

    def ask(c: ToolCall, tool: ToolInfo) -> Any:
        asked.append((c, tool))
        return answer_

    approvals = Approvals(ask=ask)
    backend, calls = Scripted(call(), call(raw='{"a": 1, "b": 1}'), answer()), []
    events = run_loop(backend, adder(calls), approvals)
    verdicts = [e for e in events if isinstance(e, ToolCallApproved | ToolCallDenied)]
    if answer_ == "always":
        assert len(asked) == 1 and [v.how for v in verdicts] == ["always", "always"]
    else:
        assert len(asked) == 2
    assert asked[0][1].name == "add" and asked[0][0].arguments == {"a": 2, "b": 3}
    assert bool(calls) == runs
    if not runs:
        assert all(isinstance(v, ToolCallDenied) and v.how == "denied" for v in verdicts)
        denied = next(e for e in events if isinstance(e, ToolCallFinished))
        assert denied.output.error and "did not allow" in denied.output.content
        assert "did not allow this call of add" in backend.prompt(1)


def test_without_anyone_to_ask_a_call_is_denied() -> None:
    events = run_loop(Scripted(call(), answer()), adder(), Approvals())
    assert any(isinstance(e, ToolCallDenied) and e.how == "not_allowed" for e in events)


def test_patterns_in_the_settings_allow_tools() -> None:
    assert Approvals(["git__*"]).allows("git__git_status")
    assert not Approvals(["git__*"]).allows("python")


def test_bad_arguments_and_unknown_tools_are_answered_not_run() -> None:
    backend = Scripted(call(raw="{oops"), call(name="nope", raw="{}"), answer())
    events = run_loop(backend, adder(), Approvals(["*"]))
    results = [e.output for e in events if isinstance(e, ToolCallFinished)]
    assert "not valid JSON" in results[0].content and results[0].error
    assert results[1].content == "There is no tool named nope. Tools: add."
    requested = [e for e in events if isinstance(e, ToolCallRequested)]
    assert requested[1].tool is None
    assert not any(isinstance(e, ToolCallApproved) for e in events)
    assert events[-1] == ChainEnded("answered")


def test_the_limit_per_reply_ends_a_stubborn_chain() -> None:
    backend, calls = Scripted(call(), call(), call(), call()), []
    events = run_loop(backend, adder(calls), Approvals(["add"]), max_calls=2)
    assert len(calls) == 2
    results = [e.output.content for e in events if isinstance(e, ToolCallFinished)]
    assert "limit of 2 tool calls" in results[2]
    assert events[-1] == ChainEnded("limit") and not backend.turns


def test_a_function_the_caller_runs_ends_the_chain() -> None:
    registry = ToolRegistry()
    registry.add_functions([ADD], "--tools tools.json")
    events = run_loop(Scripted(call()), registry, Approvals(["*"]))
    assert kinds(events)[-2:] == ["ToolCallRequested", "ChainEnded"]
    assert events[-1] == ChainEnded("external_call")


def test_a_call_of_something_that_is_no_tool_ends_the_chain() -> None:
    from gptoss_local.harmony import parse_completion

    browse = parse_completion(
        "<|channel|>analysis to=browser.search code<|message|>{}<|call|>"
    )  # fmt: skip
    events = run_loop(Scripted(browse), adder(), Approvals(["*"]))
    assert events[-1] == ChainEnded("not_a_tool")


def test_cancel_ends_the_chain_after_the_running_call() -> None:
    cancel = threading.Event()
    registry = ToolRegistry()

    def slow(arguments: dict[str, Any], stop: threading.Event | None) -> ToolOutput:
        cancel.set()  # the user pressed Esc while the tool ran
        return ToolOutput("Stopped by the user.", error=True)

    registry.add_function(ADD, slow, source="test")
    loop = ToolLoop(Scripted(call(), answer()), registry, Approvals(["add"]))
    asked = loop.offer(ReplyRequest(Conversation((Message("user", "hi"),))))
    events = list(loop.run(asked, cancel))
    assert events[-1] == ChainEnded("cancelled")


def test_the_history_keeps_calls_and_results_and_renders_them_back(tmp_path: Path) -> None:
    backend = Scripted(call(), answer("2+3 is 5."))
    with History(tmp_path / "h.sqlite3") as history:
        chat = history.create_chat()
        history.add_user_message(chat.id, "What is 2+3?")
        record = HistoryRecorder(history, chat.id)
        loop = ToolLoop(backend, adder(), Approvals(["add"]))
        for event in loop.run(loop.offer(ReplyRequest(history.to_conversation(chat.id)))):
            record(event)
        stored = history.messages(chat.id)
        assert [m.role for m in stored] == ["user", "assistant", "tool", "assistant"]
        assert stored[1].tool_calls[0].arguments == {"a": 2, "b": 3}
        assert stored[1].reasoning == "Need a sum." and stored[1].stats is not None
        assert (stored[2].tool_name, stored[2].content) == ("add", "5")
        assert stored[3].content == "2+3 is 5." and stored[3].status == "complete"
        # Reopened mid-chain, the chat renders what the model saw in its second turn.
        conversation = history.to_conversation(chat.id)
        in_chain = render_prompt(list(conversation.messages[:3]))
        assert in_chain == render_prompt(list(backend.seen[1].messages))
        markdown = to_markdown(history.get_chat(chat.id), stored)
        assert "**Tool call** `add`" in markdown and "## Tool `add`\n\n```\n5\n```" in markdown
        assert '"tool_name": "add"' in to_json(history.get_chat(chat.id), stored)


def test_a_python_call_is_stored_with_its_channel(tmp_path: Path) -> None:
    from gptoss_local.harmony import parse_completion

    code = parse_completion("<|channel|>analysis to=python code<|message|>print(6*7)<|call|>")
    with History(tmp_path / "h.sqlite3") as history:
        chat = history.create_chat()
        history.add_user_message(chat.id, "6*7?")
        reply = history.begin_assistant_message(chat.id)
        for event in code:
            history.record(reply.id, event)
        history.finish_assistant(reply.id)
        history.add_tool_message(chat.id, "python", "42\n")
        stored = history.messages(chat.id)
        assert stored[1].tool_calls[0].channel == "analysis"
        messages = list(history.to_conversation(chat.id).messages)
        assert messages[1].tool_calls == (
            ToolCallRecord("python", {"code": "print(6*7)"}, "analysis"),
        )
        text = render_prompt(messages)
        assert (
            "<|start|>assistant to=python<|channel|>analysis code<|message|>print(6*7)<|call|>"
            in text
        )
        assert "<|start|>python to=assistant<|channel|>analysis<|message|>42\n<|end|>" in text
        markdown = to_markdown(history.get_chat(chat.id), stored)
        assert "```python\nprint(6*7)\n```" in markdown


def test_a_tool_that_raises_is_an_error_result() -> None:
    registry = ToolRegistry()

    def broken(arguments: dict[str, Any], cancel: threading.Event | None) -> ToolOutput:
        raise RuntimeError("disk on fire")

    registry.add_function(ADD, broken, source="test")
    out = registry.call("add", {})
    assert out.error and "disk on fire" in out.content


class _Python:
    """Stands in for the python tool: offered, never run here."""

    builtin = BuiltinTool("python", "Runs code.")
    note = ""

    def call(self, arguments: dict[str, Any], cancel: threading.Event | None = None) -> ToolOutput:
        raise AssertionError("not run in these tests")


def test_only_the_kinds_of_tools_the_engine_offers_are_offered() -> None:
    registry = adder()
    registry.set_python(_Python())  # type: ignore[arg-type]
    for declared, functions, builtins in [
        (Capabilities(tools=True, builtin_tools=True), ["add"], ["python"]),
        (Capabilities(tools=True), ["add"], []),  # a Chat Completions server: functions only
        (Capabilities(), [], []),
    ]:
        backend = Scripted(answer())
        backend.capabilities = declared
        assert run_loop(backend, registry, Approvals())[-1] == ChainEnded("answered")
        seen = backend.seen[0]
        assert [t.name for t in seen.tools] == functions
        assert [b.name for b in seen.builtin_tools] == builtins


def test_every_turn_is_the_callers_request_and_a_forced_call_only_the_firsts() -> None:
    """Before, the loop made each turn's request anew from the conversation and the settings,
    dropping the format (`run` wrapped the engine to put it back)."""
    backend = Scripted(call(), answer('{"sum": 5}'))
    backend.capabilities = Capabilities(tools=True, response_format=True, tool_choice=True)
    loop = ToolLoop(backend, adder(), Approvals(["add"]))
    fmt, settings = ResponseFormat({"type": "object"}), GenerationSettings(seed=7)
    start = Conversation((Message("user", "What is 2+3?"),))
    asked = ReplyRequest(start, settings, fmt, ToolChoice(required=True), cache_key="chat-1")
    assert list(loop.run(loop.offer(asked)))[-1] == ChainEnded("answered")
    first, second = backend.asked
    assert first.response_format == second.response_format == fmt
    assert first.tool_choice == ToolChoice(required=True) and not second.tool_choice.forced
    assert first.settings == second.settings == settings
    assert first.cache_key == second.cache_key == "chat-1"
    assert [t.name for t in second.conversation.tools] == ["add"]  # offered once, kept
    assert [m.role for m in second.conversation.messages] == ["user", "assistant", "tool"]


def test_a_request_the_engine_cannot_take_is_refused_before_it_streams() -> None:
    backend = Scripted(answer())
    notes = Attachment("notes.md", "text/markdown", text="# Notes")
    asked = Conversation((Message("user", "Summarise this.", attachments=(notes,)),))
    with pytest.raises(UnsupportedRequest, match="attached files"):
        loop = ToolLoop(backend, adder(), Approvals())
        list(loop.run(loop.offer(ReplyRequest(asked, GenerationSettings()))))
    assert backend.seen == []


def test_a_turn_folds_into_its_message_and_the_parts_it_is_laid_out_in() -> None:
    draft = AssistantDraft()
    search = ToolCall("web.run.search", {}, "{}")  # no tool can have that name
    turn: list[Event] = [ReasoningDelta("Need "), ReasoningDelta("a sum."),
                         PreambleDelta("Adding. "), _final("Wait.")[0], call()[1], search,
                         ReasoningDelta("Both."), TurnEnded("call")]  # fmt: skip
    assert [draft.add(event) for event in turn] == [
        "reasoning", None, "content", None, "call", "call", "reasoning", None
    ]  # fmt: skip
    assert (draft.reasoning, draft.content, draft.ended) == ("Need a sum.Both.", "Adding. Wait.",
                                                             "call")  # fmt: skip
    assert draft.calls[1] is search
    record = ToolCallRecord("add", {"a": 2, "b": 3})
    assert draft.message() == Message("assistant", "Adding. Wait.", "Need a sum.Both.", (record,))
    assert AssistantDraft().message() == Message("assistant")
