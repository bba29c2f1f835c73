"""Pilot tests: Esc stops a reply (kept, marked stopped); backend errors become notifications."""

from __future__ import annotations

from pathlib import Path

from tui_helpers import (
    WAIT,
    AppOn,
    ScriptedBackend,
    notifications,
    open_history,
    reply,
    send,
    send_and_wait,
    send_until_answer,
    wait_for,
)

from gptoss_local.backends.base import BackendError
from gptoss_local.events import AnswerDelta, ReasoningDelta
from gptoss_local.session.history import History
from gptoss_local.tui.reply_view import ReplyView
from gptoss_local.tui.widgets import UserMessage


async def test_escape_stops_the_reply_and_keeps_it_marked_stopped(
    history: History, app_on: AppOn
) -> None:
    app = app_on([AnswerDelta("partial "), WAIT, AnswerDelta("never shown")])
    screen = app.chat_screen
    async with app.run_test() as pilot:
        view = await send_until_answer(pilot, "tell me", "partial ")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not screen.busy, what="the reply to stop")
        await pilot.pause()
        assert view.answer_text == "partial "
        assert "stopped" in str(view.query_one(".note").render())
    stored = history.messages(screen.state.chat_id or 0)[-1]
    assert (stored.status, stored.content) == ("stopped", "partial ")
    assert stored.stats is not None and stored.stats.stop_reason == "cancelled"


async def test_a_backend_error_is_a_notification_and_the_app_stays_usable(
    history: History, app_on: AppOn
) -> None:
    backend = ScriptedBackend(
        [AnswerDelta("half"), BackendError("decode failed", hint="Try a smaller context.")]
    )
    app = app_on(backend)
    screen = app.chat_screen
    async with app.run_test() as pilot:
        await send_and_wait(pilot, "hello")
        assert any("decode failed" in text for text in notifications(app))
        failed = history.messages(screen.state.chat_id or 0)[-1]
        assert (failed.status, failed.content) == ("failed", "half")
        backend.script = reply("ok", "recovered")
        await send_and_wait(pilot, "again")
        assert app.query(ReplyView).last().answer_text == "recovered"
        assert history.messages(screen.state.chat_id or 0)[-1].status == "complete"


async def test_a_backend_that_fails_to_load_is_reported_and_retried(app_on: AppOn) -> None:
    attempts: list[int] = []
    backend = ScriptedBackend(reply("r", "loaded at last"))

    def factory(_progress: object) -> ScriptedBackend:
        attempts.append(1)
        if len(attempts) < 3:
            raise BackendError("out of memory", hint="Use --cpu-moe 4.", kind="out_of_memory")
        return backend

    app = app_on(factory)
    screen = app.chat_screen
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: bool(notifications(app)), what="the load error")
        assert "out of memory" in notifications(app)[0]
        await send(pilot, "first")  # held while the second attempt runs; it fails too
        await wait_for(pilot, lambda: len(attempts) == 2 and not screen.host.held, 5)
        assert not app.query(ReplyView)  # no failed exchange for a model that never loaded
        await send(pilot, "second")  # the third attempt works: the held message goes
        await wait_for(pilot, lambda: bool(app.query(ReplyView)) and not screen.busy, 5, "reply")
        assert app.query(ReplyView).last().answer_text == "loaded at last"
        assert [m.text for m in app.query(UserMessage)] == ["second"]


async def test_regenerate_and_edit_the_last_message(history: History, app_on: AppOn) -> None:
    backend = ScriptedBackend(reply("r", "first answer"))
    app = app_on(backend)
    screen = app.chat_screen
    async with app.run_test() as pilot:
        await send_and_wait(pilot, "question")
        backend.script = reply("r", "second answer")
        await pilot.press("ctrl+r")
        last = lambda: history.messages(screen.state.chat_id or 0)[-1]  # noqa: E731
        await wait_for(pilot, lambda: not screen.busy and last().content == "second answer",
                       what="the new reply")  # fmt: skip
        assert [m.content for m in history.messages(screen.state.chat_id or 0)] == [
            "question",
            "second answer",
        ]
        await pilot.press("ctrl+l")
        await pilot.pause()
        assert app.query_one("ChatInput").text == "question"
        chat = screen.state.chat_id or 0
        assert len(history.messages(chat)) == 2  # nothing goes before the resend
        await pilot.press("escape")  # changed my mind: both stay, the box empties
        assert app.query_one("ChatInput").text == "" and len(app.query(ReplyView)) == 1
        assert len(history.messages(screen.state.chat_id or 0)) == 2
        await pilot.press("ctrl+l")
        await pilot.pause()
        backend.script = reply("r", "third answer")
        await send(pilot, "question, better put")  # the old exchange goes, so count nothing
        last = lambda: history.messages(screen.state.chat_id or 0)[-1]  # noqa: E731
        await wait_for(pilot, lambda: not screen.busy and last().content == "third answer")
        assert [m.content for m in history.messages(screen.state.chat_id or 0)] == [
            "question, better put",
            "third answer",
        ]
        assert len(app.query(ReplyView)) == 1


async def test_text_that_looks_like_markup_is_shown_as_is(history: History, app_on: AppOn) -> None:
    chat = history.create_chat("[b]weird[/").id
    app = app_on([BackendError("bad [tensor] at [/bold")], chat_id=chat)
    async with app.run_test() as pilot:
        await send_and_wait(pilot, "[red]hi[/")
        assert any("[/bold" in text for text in notifications(app))
        await pilot.press("ctrl+b", "f8")
        await wait_for(pilot, lambda: len(app.screen_stack) > 1, what="the question")
        await pilot.press("escape")
        assert history.get_chat(chat).title == "[b]weird[/"


async def test_quitting_mid_reply_stops_it_and_saves_it(history: History, app_on: AppOn) -> None:
    app = app_on([AnswerDelta("so far"), WAIT, AnswerDelta("never")])
    screen = app.chat_screen
    async with app.run_test() as pilot:
        await send_until_answer(pilot, "long one", "so far")
        await pilot.press("ctrl+q")
    stored = history.messages(screen.state.chat_id or 0)[-1]
    assert (stored.status, stored.content) == ("stopped", "so far")


async def test_ctrl_c_stops_the_reply_and_twice_quits(tmp_path: Path, app_on: AppOn) -> None:
    backend = ScriptedBackend([ReasoningDelta("thinking"), WAIT, AnswerDelta("never")])
    app = app_on(backend)
    screen = app.chat_screen
    async with app.run_test() as pilot:
        await send(pilot, "hello")
        await wait_for(pilot, lambda: screen.busy and bool(backend.calls), what="the reply")
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: not screen.busy, what="the reply to stop")
        assert any("Press Ctrl+C again" in n for n in notifications(app))
        assert app.is_running
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: not app.is_running, what="the app to quit")
    assert open_history(tmp_path).messages(screen.state.chat_id or 0)[-1].status == "stopped"


async def test_a_reply_the_engine_cut_short_says_so_live_and_when_reopened(
    history: History, app_on: AppOn
) -> None:
    backend = ScriptedBackend(reply("thinking", "the beginning of"))
    backend.stop_reason = "context_full"
    app = app_on(backend)
    screen = app.chat_screen
    async with app.run_test() as pilot:
        await send_and_wait(pilot, "a long question")
        note = str(app.query(ReplyView).last().query_one(".note").render())
        assert "cut off: the context was full" in note
        assert any("F9 chooses a larger context" in text for text in notifications(app))
        backend.stop_reason = "length"
        await send_and_wait(pilot, "and another")
        note = str(app.query(ReplyView).last().query_one(".note").render())
        assert "cut off: the reply reached its token limit" in note
        backend.stop_reason = "return"
        await send_and_wait(pilot, "a short one")
        assert not app.query(ReplyView).last().query_one(".note").display
        chat_id = screen.state.chat_id
    reopened = app_on(backend, chat_id=chat_id)
    async with reopened.run_test() as pilot:
        notes = [str(v.query_one(".note").render()) for v in reopened.query(ReplyView)]
        assert notes == [
            "cut off: the context was full",
            "cut off: the reply reached its token limit",
            "",
        ]
