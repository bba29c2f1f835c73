"""Pilot tests of the saved chats: sidebar, switch, new, rename, delete with confirmation."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Button, Input
from tui_helpers import (
    AppOn,
    close_screen,
    open_history,
    open_screen,
    reply,
    screen_lines,
    scripted_app,
    send_and_wait,
    wait_for,
)

from gptoss_local.session.history import History
from gptoss_local.tui.modals import ConfirmScreen, RenameScreen
from gptoss_local.tui.reply_view import ReplyView
from gptoss_local.tui.sidebar import ChatList, Sidebar
from gptoss_local.tui.widgets import UserMessage


def two_chats(history: History) -> tuple[int, int]:
    """A chat about cats (older, effort low) and one about dogs, each with a question."""
    cats = history.create_chat(effort="low").id
    history.add_user_message(cats, "tell me about cats")
    dogs = history.create_chat().id
    history.add_user_message(dogs, "tell me about dogs")
    return cats, dogs


async def test_the_sidebar_lists_chats_and_opens_one(history: History, app_on: AppOn) -> None:
    cats, _dogs = two_chats(history)
    app = app_on([])
    screen = app.chat_screen
    async with app.run_test() as pilot:
        await pilot.press("ctrl+b")
        sidebar = app.query_one(ChatList)
        assert app.query_one(Sidebar).display and sidebar.has_focus
        titles = [str(sidebar.get_option_at_index(i).prompt) for i in range(sidebar.option_count)]
        assert titles == ["tell me about dogs", "tell me about cats"]
        sidebar.highlighted = 1
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.state.chat_id == cats, what="the chat to open")
        await pilot.pause()
        assert [u.text for u in app.query(UserMessage)] == ["tell me about cats"]
        assert screen.state.effort == "low"
        await pilot.press("ctrl+b")
        assert not app.query_one(Sidebar).display


async def test_new_chat_starts_empty_and_is_saved_on_first_message(
    history: History, app_on: AppOn
) -> None:
    app = app_on(reply("r", "answer"))
    screen = app.chat_screen
    async with app.run_test() as pilot:
        await send_and_wait(pilot, "first chat")
        first = screen.state.chat_id
        await pilot.press("ctrl+n")
        assert screen.state.chat_id is None and not app.query(ReplyView)
        await send_and_wait(pilot, "second chat")
        assert screen.state.chat_id not in (None, first)
    assert [c.title for c in history.list_chats()] == ["second chat", "first chat"]


async def test_rename_the_open_chat(history: History, app_on: AppOn) -> None:
    cats, _dogs = two_chats(history)
    app = app_on([], chat_id=cats)
    screen = app.chat_screen
    async with app.run_test() as pilot:
        await open_screen(pilot, "f2", RenameScreen)
        app.screen.query_one(Input).value = "Felines"
        await close_screen(pilot, "enter", RenameScreen)
        assert history.get_chat(cats).title == "Felines"
        assert screen.sub_title == "Felines"


async def test_delete_asks_first(history: History, app_on: AppOn) -> None:
    cats, dogs = two_chats(history)
    app = app_on([], chat_id=cats)
    screen = app.chat_screen
    async with app.run_test() as pilot:
        await open_screen(pilot, "f8", ConfirmScreen)
        await close_screen(pilot, "escape", ConfirmScreen)
        assert [c.id for c in history.list_chats()] == [dogs, cats]
        await open_screen(pilot, "f8", ConfirmScreen)
        await pilot.press("right")  # from the safe Cancel to Delete, then Enter
        assert app.focused is not None and app.focused.id == "yes"
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.state.chat_id is None, what="the chat to go")
        assert [c.id for c in history.list_chats()] == [dogs]
        assert not app.query(UserMessage)


async def test_a_reply_cut_off_by_a_crash_is_marked_and_can_be_written_again(
    tmp_path: Path,
) -> None:
    crashed = open_history(tmp_path)
    chat = crashed.create_chat().id
    crashed.add_user_message(chat, "question")
    partial = crashed.begin_assistant_message(chat).id
    crashed.append_to_assistant(partial, answer="half an ans")
    crashed.close()  # as a killed process leaves it: the row stays "partial"
    history = open_history(tmp_path)
    app = scripted_app(history, reply("r", "a whole answer"), chat_id=chat)
    screen = app.chat_screen
    async with app.run_test() as pilot:
        view = app.query_one(ReplyView)
        assert view.answer_text == "half an ans"
        assert "interrupted" in str(view.query_one(".note").render())
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: not screen.busy and history.messages(chat)[-1].status
                       == "complete", what="the new reply")  # fmt: skip
    assert [m.content for m in history.messages(chat)] == ["question", "a whole answer"]


async def test_search_filters_the_sidebar_and_opens_a_match(
    history: History, app_on: AppOn
) -> None:
    cats, _dogs = two_chats(history)
    history.rename_chat(cats, "Felines")  # found by a message's text, not only the title
    app = app_on([])
    screen = app.chat_screen
    async with app.run_test() as pilot:
        await pilot.press("ctrl+f")
        search = app.query_one("#chat_search", Input)
        assert app.query_one(Sidebar).display and search.has_focus
        sidebar = app.query_one(ChatList)
        assert sidebar.option_count == 2
        await pilot.press(*"CATS")
        await wait_for(pilot, lambda: sidebar.option_count == 1, what="the filter")
        assert str(sidebar.get_option_at_index(0).prompt) == "Felines"
        await pilot.press("enter")  # to the list, then open the match
        assert sidebar.has_focus
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.state.chat_id == cats, what="the chat to open")
        search.value = "nothing like this"
        await wait_for(pilot, lambda: sidebar.option_count == 0, what="no match")
        search.value = ""
        await wait_for(pilot, lambda: sidebar.option_count == 2, what="all chats again")


async def test_keys_typed_while_a_chat_opens_go_to_that_chat(
    history: History, app_on: AppOn
) -> None:
    """Enter on a chat, Ctrl+B and a message, all in one burst (as a fast typist or a paste
    sends them): the message must reach the picked chat, not a hidden list or the old chat."""
    from textual import events

    cats, dogs = two_chats(history)
    for i in range(30):  # a long chat takes a moment to show
        history.add_user_message(cats, f"more about cats, part {i} " * 20)
    app = app_on(reply("r", "Cats purr."))
    screen = app.chat_screen
    async with app.run_test() as pilot:
        await pilot.press("ctrl+b")
        picked = app.query_one(ChatList).highlighted_option
        assert picked is not None and picked.id == str(cats)  # the most recent, first
        burst = [("enter", None), ("ctrl+b", None), *[(c, c) for c in "and lions?"]]
        for key, character in [*burst, ("enter", None)]:
            app.post_message(events.Key(key, character))  # as the terminal driver does
        in_cats = lambda: screen.state.chat_id == cats  # noqa: E731
        await wait_for(pilot, lambda: in_cats() and len(app.query(ReplyView)) == 1
                       and not screen.busy, 10, "the reply in the picked chat")  # fmt: skip
        assert not app.query_one(Sidebar).display
    assert history.messages(cats)[-2].content == "and lions?"
    assert len(history.messages(dogs)) == 1 and len(history.list_chats()) == 2


async def test_the_delete_question_wraps_whole_at_80_by_24(history: History, app_on: AppOn) -> None:
    long_title = "a question about the migration habits of arctic terns and their routes"
    chat = history.create_chat().id
    history.add_user_message(chat, "terns")
    history.rename_chat(chat, long_title)
    app = app_on([], chat_id=chat)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_screen(pilot, "f8", ConfirmScreen)
        await pilot.pause()
        dialog = app.screen.query_one("Vertical")
        assert app.screen.region.contains_region(dialog.region)
        shown = " ".join(" ".join(screen_lines(app, dialog.content_region)).split())
        assert f"Delete “{long_title}” and all its messages?" in shown
        for button in app.screen.query(Button):
            assert dialog.region.contains_region(button.region)
