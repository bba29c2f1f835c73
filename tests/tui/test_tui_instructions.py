"""Pilot tests of per-chat instructions: edited in a modal, saved, sent as the system prompt."""

from __future__ import annotations

import pytest
from textual.pilot import Pilot
from textual.widgets import TextArea
from tui_helpers import AppOn, ScriptedBackend, close_screen, open_screen, reply, send_and_wait

from gptoss_local.session.history import History
from gptoss_local.tui.app import ChatApp
from gptoss_local.tui.modals import InstructionsScreen


async def _edit(pilot: Pilot, text: str, *, save: bool = True) -> None:
    app = pilot.app
    assert isinstance(app, ChatApp)
    await open_screen(pilot, "f3", InstructionsScreen)
    app.screen.query_one(TextArea).text = text
    await close_screen(pilot, "ctrl+s" if save else "escape", InstructionsScreen)


@pytest.fixture
def backend() -> ScriptedBackend:
    """Every reply: reasoning "r", answer "a"."""
    return ScriptedBackend(reply("r", "a"))


@pytest.fixture
def app(app_on: AppOn, backend: ScriptedBackend) -> ChatApp:
    """The app on `backend`, starting in a new chat."""
    return app_on(backend)


async def test_instructions_of_a_saved_chat_are_stored_and_used(
    history: History, backend: ScriptedBackend, app: ChatApp
) -> None:
    screen = app.chat_screen
    async with app.run_test() as pilot:
        await send_and_wait(pilot, "hello")
        chat = screen.state.chat_id or 0
        await _edit(pilot, "Answer like a pirate.")
        assert history.get_chat(chat).instructions == "Answer like a pirate."
        await _edit(pilot, "ignored", save=False)
        assert history.get_chat(chat).instructions == "Answer like a pirate."
        await send_and_wait(pilot, "again")
        assert backend.calls[-1][0].instructions == "Answer like a pirate."
        await open_screen(pilot, "f3", InstructionsScreen)
        assert app.screen.query_one(TextArea).text == "Answer like a pirate."
        await pilot.press("escape")
        await _edit(pilot, "")
        assert history.get_chat(chat).instructions is None


async def test_a_new_chat_gets_its_instructions_when_first_saved(
    history: History, backend: ScriptedBackend, app: ChatApp
) -> None:
    screen = app.chat_screen
    async with app.run_test() as pilot:
        await _edit(pilot, "Be brief.")
        await send_and_wait(pilot, "hi")
        assert history.get_chat(screen.state.chat_id or 0).instructions == "Be brief."
        assert backend.calls[-1][0].instructions == "Be brief."
        await pilot.press("ctrl+n")
        await send_and_wait(pilot, "another")  # a new chat starts without them
        assert history.get_chat(screen.state.chat_id or 0).instructions is None
