"""Pilot tests of the help screen: every binding listed, opened by F1, "?" and the palette."""

from __future__ import annotations

from textual.command import CommandList, CommandPalette
from textual.widgets import DataTable
from tui_helpers import SNAPSHOT_SIZE, AppOn, assert_snapshot, close_screen, open_screen, wait_for

from gptoss_local.tui.actions import ACTIONS
from gptoss_local.tui.help import INPUT_KEYS, HelpScreen
from gptoss_local.tui.widgets import ChatInput


async def test_f1_lists_every_binding_and_escape_closes(app_on: AppOn) -> None:
    app = app_on([])
    async with app.run_test(size=SNAPSHOT_SIZE) as pilot:
        await open_screen(pilot, "f1", HelpScreen)
        table = app.screen.query_one(DataTable)
        rows = [table.get_row_at(i) for i in range(table.row_count)]
        assert len(rows) == len(ACTIONS) + len(INPUT_KEYS)
        assert [row[1] for row in rows[: len(ACTIONS)]] == [a.shown_label for a in ACTIONS]
        assert [row[2] for row in rows[: len(ACTIONS)]] == [a.shown_help for a in ACTIONS]
        assert rows[0][0] == "^q" and all(row[0] and row[2] for row in rows)
        await assert_snapshot(pilot, "help")
        await close_screen(pilot, "escape", HelpScreen)


async def test_question_mark_is_typed_in_the_input_but_opens_help_elsewhere(
    app_on: AppOn,
) -> None:
    app = app_on([])
    async with app.run_test() as pilot:
        await pilot.press("question_mark")
        assert app.query_one(ChatInput).text == "?"
        assert not isinstance(app.screen, HelpScreen)
        await pilot.press("ctrl+b")  # the sidebar takes the focus
        await open_screen(pilot, "question_mark", HelpScreen)
        await close_screen(pilot, "q", HelpScreen)


async def test_help_is_in_the_command_palette(app_on: AppOn) -> None:
    app = app_on([])
    async with app.run_test() as pilot:
        await open_screen(pilot, "ctrl+p", CommandPalette)
        await pilot.press(*"Help")
        await wait_for(pilot, lambda: app.screen.query_one(CommandList).option_count > 0)
        await open_screen(pilot, "enter", HelpScreen)


async def test_a_narrow_terminal_wraps_the_descriptions_instead_of_cutting_them(
    app_on: AppOn,
) -> None:
    app = app_on([])
    async with app.run_test(size=(60, 30)) as pilot:
        await open_screen(pilot, "f1", HelpScreen)
        await pilot.pause()
        table = app.screen.query_one(DataTable)
        assert table.virtual_size.width <= table.scrollable_content_region.width
        tall = lambda: sum(row.height > 1 for row in table.rows.values())  # noqa: E731
        narrow = tall()
        assert narrow > len(table.rows) // 2  # the long ones wrapped
        await pilot.resize_terminal(120, 30)
        await pilot.pause()
        assert tall() < narrow // 2  # and unwrap when there is room
        assert table.virtual_size.width <= table.scrollable_content_region.width
