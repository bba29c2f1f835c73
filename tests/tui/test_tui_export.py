"""Pilot tests of exporting the open chat as Markdown from the chat (Ctrl+S, or the palette)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from textual.command import CommandList, CommandPalette
from textual.widgets import Input
from tui_helpers import (
    AppOn,
    close_screen,
    notifications,
    open_screen,
    reply,
    send_and_wait,
    wait_for,
)

from gptoss_local.session import export
from gptoss_local.session.history import History
from gptoss_local.session.records import Chat
from gptoss_local.tui.exporting import suggested_name
from gptoss_local.tui.modals import ConfirmScreen, ExportScreen


@pytest.fixture(name="here")
def fixture_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The folder the app is started from (its current working folder)."""
    folder = tmp_path / "work"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


def _markdown(history: History, chat_id: int) -> str:
    return export.to_markdown(history.get_chat(chat_id), history.messages(chat_id))


async def test_ctrl_s_writes_the_chat_as_markdown_in_the_working_folder(
    history: History, app_on: AppOn, here: Path
) -> None:
    app = app_on(reply("r", "Use a comprehension."))
    async with app.run_test() as pilot:
        await send_and_wait(pilot, "How do I square numbers in Python?")
        chat_id = app.chat_screen.state.chat_id or 0
        await open_screen(pilot, "ctrl+s", ExportScreen)
        name = f"chat-{chat_id}-how-do-i-square-numbers-in-python.md"
        assert app.screen.query_one(Input).value == name
        await close_screen(pilot, "enter", ExportScreen)
        target = here / name
        done = f"Chat exported to {target}"
        await wait_for(pilot, lambda: done in notifications(app), what="the export")
    assert target.read_text(encoding="utf-8") == _markdown(history, chat_id)
    if os.name != "nt":
        assert stat.S_IMODE(target.stat().st_mode) == 0o600  # private, as `chats export -o`


async def test_a_new_chat_has_nothing_to_export(app_on: AppOn, here: Path) -> None:
    app = app_on([])
    async with app.run_test() as pilot:
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: any("Nothing to export" in n for n in notifications(app)))
        assert not isinstance(app.screen, ExportScreen)
    assert list(here.iterdir()) == []


async def test_an_existing_file_is_not_offered_and_is_replaced_only_after_asking(
    history: History, app_on: AppOn, here: Path
) -> None:
    app = app_on(reply("r", "a"))
    async with app.run_test() as pilot:
        await send_and_wait(pilot, "hello")
        chat_id = app.chat_screen.state.chat_id or 0
        taken = here / f"chat-{chat_id}-hello.md"
        taken.write_text("an older export", encoding="utf-8")
        await open_screen(pilot, "ctrl+s", ExportScreen)
        assert app.screen.query_one(Input).value == f"chat-{chat_id}-hello-2.md"
        app.screen.query_one(Input).value = taken.name
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question")
        await close_screen(pilot, "escape", ConfirmScreen)  # no: the file stays
        assert taken.read_text(encoding="utf-8") == "an older export"
        await open_screen(pilot, "ctrl+s", ExportScreen)
        app.screen.query_one(Input).value = taken.name
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question")
        await pilot.press("y")
        await wait_for(pilot, lambda: any("Chat exported" in n for n in notifications(app)))
    assert taken.read_text(encoding="utf-8") == _markdown(history, chat_id)


async def test_a_folder_that_cannot_be_written_is_a_notification(app_on: AppOn, here: Path) -> None:
    app = app_on(reply("r", "a"))
    async with app.run_test() as pilot:
        await send_and_wait(pilot, "hello")
        await open_screen(pilot, "ctrl+s", ExportScreen)
        app.screen.query_one(Input).value = "no/such/folder/chat.md"
        await close_screen(pilot, "enter", ExportScreen)
        await wait_for(pilot, lambda: any("Cannot write" in n for n in notifications(app)))
        assert app.is_running and app.chat_screen.history_error is None  # not the history's


async def test_export_is_in_the_command_palette(app_on: AppOn, here: Path) -> None:
    app = app_on(reply("r", "a"))
    async with app.run_test() as pilot:
        await send_and_wait(pilot, "hello")
        await open_screen(pilot, "ctrl+p", CommandPalette)
        await pilot.press(*"Export")
        await wait_for(pilot, lambda: app.screen.query_one(CommandList).option_count > 0)
        await open_screen(pilot, "enter", ExportScreen)


def test_the_name_offered_is_short_and_safe_for_a_file() -> None:
    def chat(title: str) -> Chat:
        import datetime as dt

        now = dt.datetime.now(dt.timezone.utc)
        return Chat(7, title, now, now, "medium", None, None, None)

    assert suggested_name(chat("")) == "chat-7.md"
    assert suggested_name(chat("../../etc/passwd?")) == "chat-7-etc-passwd.md"
    assert suggested_name(chat("Café: crème brûlée")) == "chat-7-café-crème-brûlée.md"
    long = suggested_name(chat("a plan for a long trip through the mountains of northern Portugal"))
    assert long == "chat-7-a-plan-for-a-long-trip-through-the.md"
