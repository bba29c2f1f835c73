"""The app prefills the next prompt whenever the chat settles, and a send stops it first."""

from __future__ import annotations

import datetime as dt
import threading
from pathlib import Path

from tui_helpers import (
    AppOn,
    ScriptedBackend,
    open_history,
    reply,
    scripted_app,
    send_and_wait,
    wait_for,
    wait_for_model,
)

from gptoss_local.backends.base import Capabilities, GenerationSettings, ReplyRequest
from gptoss_local.chat.tool_host import ChatTools
from gptoss_local.conversation import Conversation, Tool
from gptoss_local.harmony import render_prompt
from gptoss_local.harmony.prefix import render_next_turn_prefix
from gptoss_local.tools import ToolOutput, ToolRegistry

DAY = dt.date(2026, 1, 1)  # one date for both prompts, whenever the test runs


class SlowPrefill(ScriptedBackend):
    """A scripted backend whose prefill runs until it is cancelled (as a long history would)."""

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.cancelled = threading.Event()

    def prefill(self, request: ReplyRequest, cancel=None) -> int:  # type: ignore[no-untyped-def]
        self.prefills.append((request.conversation, request.settings))
        assert cancel is not None
        while not cancel.wait(0.005):
            pass
        self.cancelled.set()
        return 0


async def test_the_chat_is_prefilled_after_load_reply_effort_and_switch(app_on: AppOn) -> None:
    backend = ScriptedBackend(reply("thinking", "An answer."))
    app = app_on(backend)
    screen = app.chat_screen
    async with app.run_test() as pilot:
        await wait_for_model(pilot)
        await wait_for(pilot, lambda: len(backend.prefills) == 1, 5, "the prefill after load")
        conversation, settings = backend.prefills[0]
        assert conversation.messages == () and settings.effort == screen.state.effort  # a new chat
        await send_and_wait(pilot, "a question")
        await wait_for(pilot, lambda: len(backend.prefills) == 2, 5, "the prefill after reply")
        conversation, _ = backend.prefills[1]
        assert [m.role for m in conversation.messages] == ["user", "assistant"]
        assert conversation.messages[1].content == "An answer."
        await pilot.press("ctrl+o")  # effort: the system message changes
        await wait_for(pilot, lambda: len(backend.prefills) == 3, 5, "the prefill after effort")
        assert backend.prefills[2][1].effort == screen.state.effort != settings.effort
        await pilot.press("ctrl+n")  # a new chat: the prefix without the old messages
        await wait_for(pilot, lambda: len(backend.prefills) == 4, 5, "the prefill of a new chat")
        assert backend.prefills[3][0].messages == ()


async def test_sending_stops_a_prefill_in_progress(app_on: AppOn) -> None:
    backend = SlowPrefill(reply("thinking", "An answer."))
    app = app_on(backend)
    async with app.run_test() as pilot:
        await wait_for_model(pilot)
        await wait_for(pilot, lambda: len(backend.prefills) == 1, 5, "the prefill")
        assert not backend.cancelled.is_set()  # it runs until told to stop
        await send_and_wait(pilot, "a question")
        # Sending told the prefill to stop (keeping the two apart on the engine is the
        # backend's lock: tests/backends/test_llama_prefill.py).
        assert backend.cancelled.is_set() and backend.calls
        await pilot.press("ctrl+q")


class NoFunctions(ScriptedBackend):
    """An engine that prefills but cannot offer function tools (a server that takes none)."""

    capabilities = Capabilities(prefill=True, builtin_tools=True)


def _with_add() -> ToolRegistry:
    registry = ToolRegistry()
    add = Tool("add", "Adds two numbers.", {"type": "object", "properties": {}})
    registry.add_function(add, lambda _arguments, _cancel: ToolOutput("5"), source="test")
    return registry


def _options(conversation: Conversation, settings: GenerationSettings) -> dict[str, object]:
    """What the engine renders besides the messages (as the llama.cpp backend passes it)."""
    return {"effort": settings.effort, "instructions": conversation.instructions,
            "tools": conversation.tools, "builtin_tools": conversation.builtin_tools,
            "current_date": DAY}  # fmt: skip


async def test_the_prefilled_prefix_is_the_one_the_reply_sends(tmp_path: Path) -> None:
    """The prefill offers the tools as the engine can offer them, as the reply does: with an
    engine that offers no functions, a prefill that offered them all would cache a prompt the
    reply never sends."""
    backend = NoFunctions(reply("thinking", "An answer."))
    app = scripted_app(open_history(tmp_path), backend, tools=ChatTools(open=_with_add))
    async with app.run_test() as pilot:
        await wait_for_model(pilot)
        await wait_for(pilot, lambda: len(backend.prefills) == 1, 5, "the prefill")
        await send_and_wait(pilot, "a question")
    prefilled, sent = backend.prefills[0], backend.calls[0]
    prefix = render_next_turn_prefix(prefilled[0].messages, **_options(*prefilled))  # type: ignore[arg-type]
    prompt = render_prompt(sent[0].messages, **_options(*sent))  # type: ignore[arg-type]
    assert prompt.startswith(prefix) and len(prompt) > len(prefix)
    assert prefilled[0].tools == sent[0].tools == ()  # the engine cannot offer `add`
