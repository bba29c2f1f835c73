"""Pilot tests of input history: Up and Down recall the messages sent before."""

from __future__ import annotations

from tui_helpers import AppOn, reply, send_and_wait

from gptoss_local.session.history import History
from gptoss_local.tui.widgets import ChatInput


async def test_up_and_down_recall_sent_messages_and_the_draft(app_on: AppOn) -> None:
    app = app_on(reply("r", "a"))
    async with app.run_test() as pilot:
        await send_and_wait(pilot, "first")
        await send_and_wait(pilot, "second\nhas two lines")
        box = app.query_one(ChatInput)
        box.focus()
        await pilot.press("d", "r")  # a draft, on the first (only) line
        await pilot.press("up")
        assert box.text == "second\nhas two lines"
        await pilot.press("up")  # the cursor is at the end: first it goes up a line
        assert box.text == "second\nhas two lines" and box.cursor_location[0] == 0
        await pilot.press("up")
        assert box.text == "first"
        await pilot.press("up")  # nothing older: stays
        assert box.text == "first"
        await pilot.press("down")
        assert box.text == "second\nhas two lines"
        await pilot.press("down")
        assert box.text == "dr"
        await pilot.press("down")  # not browsing: an ordinary cursor move
        assert box.text == "dr"


async def test_history_follows_the_open_chat(history: History, app_on: AppOn) -> None:
    saved = history.create_chat().id
    history.add_user_message(saved, "an old question")
    app = app_on(reply("r", "a"))
    screen = app.chat_screen
    async with app.run_test() as pilot:
        box = app.query_one(ChatInput)
        await send_and_wait(pilot, "new one")
        await screen.open_chat(saved)
        await pilot.press("up")
        assert box.text == "an old question"
        await pilot.press("down", "ctrl+n")
        await pilot.press("up")  # a new chat recalls what was sent in this session
        assert box.text == "new one"
