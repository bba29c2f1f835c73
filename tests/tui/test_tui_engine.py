"""The TUI with the real llama.cpp engine on the tiny model (CPU): one end-to-end chat, and the
first reply reusing what the app prefilled after the load."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from engine_helpers import open_tiny, steered
from tui_helpers import AppOn, send_and_wait, wait_for, wait_for_model

from gptoss_local.backends.base import GenerationSettings
from gptoss_local.backends.llama_cpp import LlamaCppBackend
from gptoss_local.session.history import History
from gptoss_local.tui.app import ChatApp
from gptoss_local.tui.status import StatusBar
from gptoss_local.tui.widgets import ReplyView


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
