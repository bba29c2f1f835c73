"""Pilot tests: tool calls in the chat. The dialog asks (once, always for this chat, deny),
tools allowed in the settings run without it, each call is shown in its reply with the result
folded, saved as tool rows and shown again when the chat is reopened; Esc stops a running tool.
The model is a scripted one whose turns call a fake `add` tool (the real tools are tested in
tests/test_tools_*.py)."""

from __future__ import annotations

import threading
from collections.abc import Generator, Sequence
from pathlib import Path
from typing import Any

from textual.widgets import Static
from tui_helpers import (
    ScriptedBackend,
    notifications,
    open_history,
    scripted_app,
    send,
    send_and_wait,
    wait_for,
    wait_for_model,
)

from gptoss_local.backends.base import Reply, ReplyRequest, Stats
from gptoss_local.chat.tool_host import ChatTools
from gptoss_local.conversation import Tool
from gptoss_local.events import AnswerDelta, Event, ReasoningDelta, TurnEnded
from gptoss_local.harmony import parse_completion
from gptoss_local.session.history import History
from gptoss_local.tools import ToolOutput, ToolRegistry
from gptoss_local.tui.app import ChatApp
from gptoss_local.tui.approval import ApprovalScreen
from gptoss_local.tui.tool_views import ToolCallView
from gptoss_local.tui.widgets import ReplyView

ADD = Tool("add", "Adds two numbers.", {"type": "object", "properties": {
    "a": {"type": "number"}, "b": {"type": "number"}}})  # fmt: skip
WAIT_TOOL = Tool("wait", "Waits until stopped.", {"type": "object", "properties": {}})


def calls(name: str = "add", raw: str = '{"a": 2, "b": 3}') -> list[Event]:
    """A turn that thinks, then calls `name`."""
    return parse_completion(
        "<|channel|>analysis<|message|>Need a sum.<|end|><|start|>assistant"
        f"<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>{raw}<|call|>"
    )


def answers(text: str = "It is 5.") -> list[Event]:
    return [ReasoningDelta("Got it."), AnswerDelta(text), TurnEnded("return")]


class TurnsBackend(ScriptedBackend):
    """A scripted backend that plays one turn per `stream`, in order, round and round."""

    def __init__(self, *turns: list[Event]) -> None:
        super().__init__([])
        self.turns = list(turns)

    def stream(self, request: ReplyRequest, cancel: threading.Event | None = None) -> Reply:
        turn = self.turns[len(self.calls) % len(self.turns)]
        self.calls.append((request.conversation, request.settings))

        def play() -> Generator[Event, None, Stats]:
            yield from turn
            reason = "call" if turn[-1] == TurnEnded("call") else "return"
            return Stats(generated_tokens=len(turn), stop_reason=reason)  # type: ignore[arg-type]

        return Reply(play())


class Adder:
    """The fake `add` tool, keeping the arguments of each call; a `wait` tool that runs until
    the reply is stopped."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []
        self.waiting = threading.Event()
        self.stopped = threading.Event()

    def registry(self) -> ToolRegistry:
        registry = ToolRegistry()
        registry.add_function(ADD, self.add, source="test")
        registry.add_function(WAIT_TOOL, self.wait, source="test")
        return registry

    def add(self, arguments: dict[str, Any], cancel: threading.Event | None) -> ToolOutput:
        self.seen.append(arguments)
        return ToolOutput(str(arguments["a"] + arguments["b"]), note="added by a test")

    def wait(self, arguments: dict[str, Any], cancel: threading.Event | None) -> ToolOutput:
        self.waiting.set()
        while cancel is not None and not cancel.wait(0.01):
            pass
        self.stopped.set()
        return ToolOutput("stopped by the user", error=True)


def tool_app(
    tmp_path: Path, backend: ScriptedBackend, adder: Adder, allowed: Sequence[str] = ()
) -> tuple[ChatApp, History]:
    history = open_history(tmp_path)
    tools = ChatTools(open=adder.registry, allowed=tuple(allowed))
    return scripted_app(history, backend, tools=tools), history


async def answer_dialog(pilot: Any, key: str) -> str:
    """Wait for the approval dialog and press `key` in it; the text it showed."""
    app = pilot.app
    await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the dialog")
    await pilot.pause()
    shown = "\n".join(str(w.render()) for w in app.screen.query("Label, Static"))
    await pilot.press(key)
    await wait_for(pilot, lambda: not isinstance(app.screen, ApprovalScreen), what="its close")
    return shown


async def reply_ends(pilot: Any) -> None:
    screen = pilot.app.chat_screen
    await wait_for(pilot, lambda: not screen.busy, what="the reply to end")
    await pilot.pause()


def roles(history: History, chat_id: int | None) -> list[str]:
    return [m.role for m in history.messages(chat_id or 0)]


async def test_allow_once_runs_the_call_and_the_reply_goes_on(tmp_path: Path) -> None:
    backend, adder = TurnsBackend(calls(), answers()), Adder()
    app, history = tool_app(tmp_path, backend, adder)
    async with app.run_test() as pilot:
        await send(pilot, "What is 2+3?")
        shown = await answer_dialog(pilot, "o")
        assert "add" in shown and '"a": 2' in shown  # the name and the arguments, as JSON
        await reply_ends(pilot)
        assert adder.seen == [{"a": 2, "b": 3}]
        first, second = app.query(ReplyView)
        (view,) = first.query(ToolCallView)
        assert "add" in str(view.query_one(".call", Static).render())
        assert view.result_box.collapsed and view.result_box.title.startswith("Result")
        assert str(view.query_one(".result", Static).render()) == "5"
        assert "added by a test" in str(view.query_one(".tool-note", Static).render())
        assert second.answer_text == "It is 5."
        assert not second.query(ToolCallView)
    # The model's second turn read the result as a tool message; all of it is saved.
    assert backend.calls[1][0].messages[-1].content == "5"
    assert backend.calls[0][0].tools == (ADD, WAIT_TOOL)
    chat_id = app.chat_screen.state.chat_id
    assert roles(history, chat_id) == ["user", "assistant", "tool", "assistant"]
    assert history.messages(chat_id or 0)[1].tool_calls[0].name == "add"


async def test_always_is_not_asked_again_in_this_chat_but_in_another(tmp_path: Path) -> None:
    backend, adder = TurnsBackend(calls(), answers()), Adder()
    app, _history = tool_app(tmp_path, backend, adder)
    async with app.run_test() as pilot:
        await send(pilot, "What is 2+3?")
        await answer_dialog(pilot, "a")
        await reply_ends(pilot)
        await send_and_wait(pilot, "And again?")  # would time out on a dialog
        assert len(adder.seen) == 2
        await pilot.press("ctrl+n")
        await send(pilot, "In a new chat?")
        await answer_dialog(pilot, "o")
        await reply_ends(pilot)
        assert len(adder.seen) == 3


async def test_deny_answers_the_model_which_goes_on_without_the_call(tmp_path: Path) -> None:
    backend, adder = TurnsBackend(calls(), answers("I could not add.")), Adder()
    app, history = tool_app(tmp_path, backend, adder)
    async with app.run_test() as pilot:
        await send(pilot, "What is 2+3?")
        await answer_dialog(pilot, "escape")
        await reply_ends(pilot)
        assert adder.seen == []
        view = app.query_one(ToolCallView)
        assert "denied" in str(view.query_one(".verdict", Static).render())
        assert app.query(ReplyView).last().answer_text == "I could not add."
    tool_row = history.messages(app.chat_screen.state.chat_id or 0)[2]
    assert tool_row.role == "tool" and "did not allow" in tool_row.content


async def test_tools_allowed_in_the_settings_run_without_asking(tmp_path: Path) -> None:
    backend, adder = TurnsBackend(calls(), answers()), Adder()
    app, _history = tool_app(tmp_path, backend, adder, allowed=["ad*"])
    async with app.run_test() as pilot:
        await send_and_wait(pilot, "What is 2+3?")  # would time out on a dialog
        assert adder.seen == [{"a": 2, "b": 3}]
        assert app.query(ReplyView).last().answer_text == "It is 5."


async def test_a_reopened_chat_shows_its_calls_and_folded_results(tmp_path: Path) -> None:
    backend, adder = TurnsBackend(calls(), answers()), Adder()
    app, _history = tool_app(tmp_path, backend, adder, allowed=["add"])
    screen = app.chat_screen
    async with app.run_test() as pilot:
        await send_and_wait(pilot, "What is 2+3?")
        chat_id = screen.state.chat_id
        await pilot.press("ctrl+n")
        await wait_for(pilot, lambda: not app.query(ReplyView), what="the new chat")
        await screen.open_chat(chat_id)
        await pilot.pause()
        first, second = app.query(ReplyView)
        (view,) = first.query(ToolCallView)
        assert view.result_box.collapsed and view.result_box.display
        assert str(view.query_one(".result", Static).render()) == "5"
        assert not first.query_one(".note", Static).display  # no "no answer" under a call
        assert second.answer_text == "It is 5."


async def test_escape_stops_a_running_tool_and_the_reply(tmp_path: Path) -> None:
    backend, adder = TurnsBackend(calls("wait", "{}"), answers()), Adder()
    app, history = tool_app(tmp_path, backend, adder, allowed=["wait"])
    async with app.run_test() as pilot:
        await send(pilot, "Wait for me")
        await wait_for(pilot, adder.waiting.is_set, what="the tool to run")
        await pilot.press("escape")
        await reply_ends(pilot)
        assert adder.stopped.is_set() and len(backend.calls) == 1  # the model was not asked on
        view = app.query(ReplyView).last()
        assert "stopped" in str(view.query_one(".note", Static).render())
    chat_id = app.chat_screen.state.chat_id
    assert roles(history, chat_id) == ["user", "assistant", "tool"]
    assert history.messages(chat_id or 0)[2].content == "stopped by the user"


async def test_the_prefill_offers_the_tools_and_problems_are_shown(tmp_path: Path) -> None:
    adder = Adder()

    def broken() -> ToolRegistry:
        registry = adder.registry()
        registry.problems.append("MCP server 'git': it did not start")
        return registry

    backend = TurnsBackend(answers())
    history = open_history(tmp_path)
    app = scripted_app(history, backend, tools=ChatTools(open=broken))
    async with app.run_test() as pilot:
        await wait_for_model(pilot)
        await wait_for(pilot, lambda: bool(backend.prefills), what="the prefill")
        assert backend.prefills[0][0].tools == (ADD, WAIT_TOOL)
        assert any("did not start" in text for text in notifications(app))
