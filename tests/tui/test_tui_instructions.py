"""Pilot tests of per-chat instructions: edited in a modal, saved, sent as the system prompt."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import TextArea
from tui_helpers import (
    ScriptedBackend,
    open_history,
    reply,
    run_async,
    scripted_app,
    send_and_wait,
    wait_for,
)

from gptoss_local.tui.app import ChatApp
from gptoss_local.tui.modals import InstructionsScreen


async def _edit(pilot: Pilot, text: str, *, save: bool = True) -> None:
    app = pilot.app
    assert isinstance(app, ChatApp)
    await pilot.press("f3")
    await wait_for(pilot, lambda: isinstance(app.screen, InstructionsScreen), what="the editor")
    app.screen.query_one(TextArea).text = text
    await pilot.press("ctrl+s" if save else "escape")
    await wait_for(pilot, lambda: not isinstance(app.screen, InstructionsScreen))


@run_async
async def test_instructions_of_a_saved_chat_are_stored_and_used(tmp_path: Path) -> None:
    history = open_history(tmp_path)
    backend = ScriptedBackend(reply("r", "a"))
    app = scripted_app(history, backend)
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
        await pilot.press("f3")
        await wait_for(pilot, lambda: isinstance(app.screen, InstructionsScreen))
        assert app.screen.query_one(TextArea).text == "Answer like a pirate."
        await pilot.press("escape")
        await _edit(pilot, "")
        assert history.get_chat(chat).instructions is None


@run_async
async def test_a_new_chat_gets_its_instructions_when_first_saved(tmp_path: Path) -> None:
    history = open_history(tmp_path)
    backend = ScriptedBackend(reply("r", "a"))
    app = scripted_app(history, backend)
    screen = app.chat_screen
    async with app.run_test() as pilot:
        await _edit(pilot, "Be brief.")
        await send_and_wait(pilot, "hi")
        assert history.get_chat(screen.state.chat_id or 0).instructions == "Be brief."
        assert backend.calls[-1][0].instructions == "Be brief."
        await pilot.press("ctrl+n")
        await send_and_wait(pilot, "another")  # a new chat starts without them
        assert history.get_chat(screen.state.chat_id or 0).instructions is None
