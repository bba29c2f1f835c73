"""Pilot tests of the chat screen with a scripted backend: send, stream, reasoning, effort."""

from __future__ import annotations

from rich.cells import cell_len
from textual.widgets import Markdown
from tui_helpers import INFO, WAIT, AppOn, ScriptedBackend, reply, send_and_wait, wait_for

from gptoss_local.events import AnswerDelta, ReasoningDelta
from gptoss_local.session.history import History
from gptoss_local.tui.reply_view import ReplyView
from gptoss_local.tui.status import StatusBar
from gptoss_local.tui.widgets import ChatInput, UserMessage


async def test_send_streams_the_reply_and_saves_it(history: History, app_on: AppOn) -> None:
    backend = ScriptedBackend([ReasoningDelta("The user "), ReasoningDelta("greets."),
                               AnswerDelta("Hello "), AnswerDelta("**there**")])  # fmt: skip
    app = app_on(backend)
    screen = app.chat_screen
    async with app.run_test() as pilot:
        await pilot.press("h", "i")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.query(ReplyView) and not screen.busy, what="the reply")
        await pilot.pause()
        assert [u.text for u in app.query(UserMessage)] == ["hi"]
        view = app.query_one(ReplyView)
        assert view.answer_text == "Hello **there**"
        assert view.reasoning_text == "The user greets."
        assert view.query_one(".answer", Markdown).source == "Hello **there**"
        assert app.query_one(ChatInput).text == ""
        assert "gpt-oss-test" in str(app.query_one(StatusBar).render())
    conversation, _ = backend.calls[0]
    assert conversation.messages[-1].content == "hi"
    user, answer = history.messages(screen.state.chat_id or 0)
    assert (user.role, user.content) == ("user", "hi")
    assert (answer.content, answer.reasoning, answer.status) == (
        "Hello **there**",
        "The user greets.",
        "complete",
    )


async def test_reasoning_is_live_then_collapses_when_the_answer_starts(app_on: AppOn) -> None:
    backend = ScriptedBackend([ReasoningDelta("pondering"), WAIT, AnswerDelta("done")])
    app = app_on(backend)
    screen = app.chat_screen
    async with app.run_test() as pilot:
        await pilot.press("x", "enter")
        await wait_for(pilot, lambda: bool(app.query(ReplyView)))
        view = app.query_one(ReplyView)
        await wait_for(pilot, lambda: view.reasoning_text == "pondering", what="reasoning")
        assert not view.reasoning_box.collapsed
        assert view.reasoning_box.title.startswith("Thinking…")
        backend.gate.set()
        await wait_for(pilot, lambda: not screen.busy, what="the reply to end")
        assert view.reasoning_box.collapsed
        assert view.reasoning_box.title.startswith("Thought for")
        assert view.answer_text == "done"
        await pilot.press("ctrl+t")  # show all reasoning
        assert not view.reasoning_box.collapsed
        await pilot.press("ctrl+t")
        assert view.reasoning_box.collapsed


async def test_effort_switch_is_shown_stored_and_used(history: History, app_on: AppOn) -> None:
    backend = ScriptedBackend(reply("r", "a"))
    app = app_on(backend)
    screen = app.chat_screen
    async with app.run_test() as pilot:
        await send_and_wait(pilot, "first")
        assert backend.calls[-1][1].effort == "medium"
        await pilot.press("ctrl+o")
        assert screen.state.effort == "high"
        assert history.get_chat(screen.state.chat_id or 0).effort == "high"
        assert "effort high" in str(app.query_one(StatusBar).render())
        await send_and_wait(pilot, "second")
        assert backend.calls[-1][1].effort == "high"
        assert history.messages(screen.state.chat_id or 0)[-1].effort == "high"
        chat_id = screen.state.chat_id
    reopened = app_on(backend, chat_id=chat_id)
    reopened_screen = reopened.chat_screen
    async with reopened.run_test() as pilot:
        assert reopened_screen.state.effort == "high"
        assert len(reopened.query(ReplyView)) == 2
        await pilot.press("ctrl+o")
        assert history.get_chat(chat_id or 0).effort == "low"


WIDE = (160, 24)  # the status bar's whole line fits: every fact in its full form


async def test_the_status_bar_warns_near_the_context_limit(app_on: AppOn) -> None:
    backend = ScriptedBackend(reply("r", "a"))
    app = app_on(backend)
    screen = app.chat_screen
    async with app.run_test(size=WIDE) as pilot:
        await send_and_wait(pilot, "short")
        status = app.query_one(StatusBar)
        assert "context 100/8,192" in str(status.render())
        assert "TTFT 0.12s" in str(status.render()) and "250 tok/s" in str(status.render())
        assert not status.has_class("-warning")
        backend.context_used = 6500  # 79 %: not yet
        await send_and_wait(pilot, "longer")
        assert "⚠" not in str(status.render()) and not status.has_class("-warning")
        backend.context_used = 6600  # 80 %: a neutral warning, first on the bar
        await send_and_wait(pilot, "longer still")
        assert str(status.render()).startswith("⚠ context 80 % full  ·  gpt-oss-test")
        assert "new chat" not in str(status.render()) and status.has_class("-warning")
        chat = screen.state.chat_id
        await pilot.press("ctrl+n")  # a new chat has no figures of its own yet
        await wait_for(pilot, lambda: "TTFT" not in str(status.render()), what="a clean bar")
        assert "context 0/8,192" in str(status.render()) and not status.has_class("-warning")
        await screen.open_chat(chat)  # back: its last reply's figures
        assert "context 6,600/8,192" in str(status.render())


async def test_at_80_columns_the_status_bar_says_everything_on_two_lines(app_on: AppOn) -> None:
    backend = ScriptedBackend(reply("r", "a"))
    app = app_on(backend)
    async with app.run_test(size=(80, 24)) as pilot:
        await send_and_wait(pilot, "short")
        status = app.query_one(StatusBar)
        shown = str(status.render()).split("\n")
        assert len(shown) == 2 and status.size.height == 2
        assert all(cell_len(line) <= status.size.width for line in shown)
        text = " · ".join(shown)
        for fact in ("gpt-oss-test", "context 1 %", "TTFT 0.12s", "250 tok/s", "effort medium",
                     "entirely on the GPU", "scripted"):  # fmt: skip
            assert fact in text.split(" · ")
        backend.context_used = 7900
        await send_and_wait(pilot, "longer")
        shown = str(status.render()).split("\n")
        assert shown[0].startswith("⚠ context 96 % full · gpt-oss-test · TTFT")
        assert "context 96 %" not in shown[0].split(" · ")  # said once, by the warning


async def test_a_saved_chat_shows_the_loaded_context_size(history: History, app_on: AppOn) -> None:
    """A chat written with a 4,096-token context, reopened with the model loaded at 8,192."""
    from gptoss_local.backends.base import Stats

    chat = history.create_chat(effort="medium").id
    history.add_user_message(chat, "hello")
    reply_id = history.begin_assistant_message(chat, effort="medium").id
    history.finish_assistant(reply_id, Stats(context_size=4096, context_used=3000))
    app = app_on([], chat_id=chat)
    async with app.run_test(size=WIDE) as pilot:
        status = app.query_one(StatusBar)
        await wait_for(pilot, lambda: status.info is not None, what="the model")
        assert "context 3,000/8,192" in str(status.render())


async def test_a_fast_model_does_not_leave_the_ui_behind(app_on: AppOn) -> None:
    # 2,000 tokens at about 2,000 tokens/s: the UI must be done soon after the backend is, measured
    # against how long the backend itself streamed (a UI that redraws the whole reply per token
    # falls behind by many times that), so a slow machine slows both sides alike.
    import time

    tokens = [AnswerDelta(f"w{i} ") for i in range(2000)]
    backend = ScriptedBackend(tokens, delay=0.0005)
    app = app_on(backend)
    async with app.run_test() as pilot:
        await send_and_wait(pilot, "go", timeout=30)
        done = time.monotonic()
        view = app.query_one(ReplyView)
        assert view.answer_text == "".join(t.text for t in tokens)
        assert view.query_one(".answer", Markdown).source == view.answer_text
    assert backend.started_at is not None and backend.finished_at is not None
    streamed = backend.finished_at - backend.started_at
    lag = done - backend.finished_at
    assert lag < streamed, f"the UI finished {lag:.2f}s after a {streamed:.2f}s stream"


async def test_every_action_is_in_the_command_palette(app_on: AppOn) -> None:
    from gptoss_local.tui.actions import ACTIONS
    from gptoss_local.tui.palette import ActionCommands

    app = app_on([])
    async with app.run_test():
        titles = {command.title for command in app.get_system_commands(app.screen)}  # Quit
        titles |= {hit.text async for hit in ActionCommands(app.screen).discover()}
        bindings = {b.id for b in app.chat_screen.BINDINGS if hasattr(b, "id")}
    assert {action.shown_label for action in ACTIONS} <= titles
    assert {action.id for action in ACTIONS} <= bindings


async def test_ctrl_q_quits(app_on: AppOn) -> None:
    app = app_on([])
    async with app.run_test() as pilot:
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: app._exit, what="the app to exit")


async def test_messages_landing_during_teardown_are_ignored(app_on: AppOn) -> None:
    """A load or a reply that ends while the app closes finds its widgets gone, not an error."""
    from gptoss_local.tui.messages import BackendLoaded, ReplyFinished

    app = app_on([])
    screen = app.chat_screen
    async with app.run_test() as pilot:
        await app.query_one(StatusBar).remove()  # what teardown does first, as CI once caught
        await pilot.pause()
        screen.model_loaded(BackendLoaded(INFO))
        await screen.reply_finished(ReplyFinished(None, stopped=True))
        assert not app.query(StatusBar)
