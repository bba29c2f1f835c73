"""The TUI with the real llama.cpp engine on the tiny model (CPU): one end-to-end chat, the
first reply reusing what the app prefilled after the load, and a grammar-steered python call
allowed in the dialog, run by the real python tool, and answered from."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from engine_helpers import open_tiny, steered
from tool_helpers import steered_turns
from tui_helpers import AppOn, send, send_and_wait, wait_for, wait_for_model

from gptoss_local.backends.base import GenerationSettings
from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
from gptoss_local.chat.tool_host import ChatTools
from gptoss_local.config import Settings
from gptoss_local.session.history import History
from gptoss_local.tools import python_tool
from gptoss_local.tui.app import ChatApp, make_app
from gptoss_local.tui.approval import ApprovalScreen
from gptoss_local.tui.reply_view import ReplyView
from gptoss_local.tui.status import StatusBar
from gptoss_local.tui.tool_views import ToolCallView


@pytest.fixture
def engine(tiny_gguf: Path) -> Iterator[LlamaCppBackend]:
    """The tiny model, every reply of the app steered to a well-formed one; closed after."""
    backend = open_tiny(tiny_gguf)
    backend.options = steered(backend)
    yield backend
    backend.close()


@pytest.fixture
def app(engine: LlamaCppBackend, app_on: AppOn) -> ChatApp:
    """The app on the tiny model, replies of at most 64 tokens."""
    return app_on(lambda _progress: engine, generation=GenerationSettings(max_tokens=64))


async def test_a_reply_from_the_real_engine_arrives_and_is_saved(
    app: ChatApp, history: History
) -> None:
    async with app.run_test() as pilot:
        await wait_for_model(pilot)
        await send_and_wait(pilot, "hi", timeout=120)
        view = app.query_one(ReplyView)
        assert view.answer_text == "Hello there"
        assert view.reasoning_text == "The user says hi"
        status = str(app.query_one(StatusBar).render())
        assert "tok/s" in status and "context" in status
    chat = history.get_chat(app.chat_screen.state.chat_id or 0)
    assert chat.backend == "llamacpp"
    user, answer = history.messages(chat.id)
    assert (user.content, answer.content, answer.status) == ("hi", "Hello there", "complete")
    assert answer.stats is not None and answer.stats.generated_tokens > 0


async def test_the_first_reply_reuses_what_was_prefilled_after_the_load(
    app: ChatApp, engine: LlamaCppBackend, history: History
) -> None:
    async with app.run_test() as pilot:
        await wait_for_model(pilot)
        await wait_for(pilot, lambda: len(engine.cache.tokens) > 20, 30, "the prefill")
        await send_and_wait(pilot, "hi", timeout=120)
    _user, answer = history.messages(app.chat_screen.state.chat_id or 0)
    assert answer.stats is not None and answer.status == "complete"
    assert answer.stats.cached_tokens > 20  # the system message was evaluated before
    assert answer.stats.evaluated_tokens < answer.stats.prompt_tokens - 20


async def test_the_model_calls_python_in_the_chat_once_allowed(
    engine: LlamaCppBackend, history: History
) -> None:
    settings = Settings(python_timeout=20)
    tools = ChatTools(python=lambda chat_id: python_tool(settings, f"engine-chat-{chat_id}"))
    app = make_app(history, lambda _progress: steered_turns(engine),  # type: ignore[arg-type,return-value]
                   GenerationSettings(max_tokens=64), tools=tools)  # fmt: skip
    try:
        async with app.run_test() as pilot:
            await wait_for_model(pilot)
            await send(pilot, "What is 6*7?")
            await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), 60, "asking")
            await pilot.press("o")
            await wait_for(pilot, lambda: not app.chat_screen.busy, 120, "the reply")
            await pilot.pause()
            first, second = app.query(ReplyView)
            view = first.query_one(ToolCallView)
            assert view.output is not None and view.output.content == "42\n"
            assert second.answer_text == "The answer is 42"
        rows = history.messages(app.chat_screen.state.chat_id or 0)
        assert [(m.role, m.content) for m in rows[2:]] == [
            ("tool", "42\n"),
            ("assistant", "The answer is 42"),
        ]
    finally:
        app.close_backend()
