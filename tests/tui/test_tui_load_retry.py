"""After a failed load, sending a message tries the load again: the message waits in the box
and goes once the model is ready, so retries do not fill the chat with failed replies."""

from __future__ import annotations

from tui_helpers import AppOn, ScriptedBackend, notifications, reply, send, wait_for

from gptoss_local.backends.base import BackendError
from gptoss_local.session.history import History
from gptoss_local.tui.loading import LoadingBanner
from gptoss_local.tui.reply_view import ReplyView
from gptoss_local.tui.status import StatusBar
from gptoss_local.tui.widgets import ChatInput, UserMessage


def failing_then(works_on_attempt: int, attempts: list[int]):  # type: ignore[no-untyped-def]
    """A factory that fails with an out-of-memory error until attempt `works_on_attempt`."""

    def factory(_progress: object) -> ScriptedBackend:
        attempts.append(len(attempts) + 1)
        if len(attempts) < works_on_attempt:
            raise BackendError("not enough memory", hint="Use --cpu-moe 4.", kind="out_of_memory")
        return ScriptedBackend(reply("thinking", "Hello there."))

    return factory


async def test_a_retry_that_fails_keeps_the_message_and_saves_nothing(
    history: History, app_on: AppOn
) -> None:
    attempts: list[int] = []
    app = app_on(failing_then(99, attempts))
    async with app.run_test() as pilot:
        banner = app.query_one(LoadingBanner)
        await wait_for(pilot, lambda: banner.has_class("-failed"), 5, "the first failure")
        for attempt in (2, 3):  # each Enter is one more try, and nothing more
            await send(pilot, "hello?")
            await wait_for(pilot, lambda n=attempt: len(attempts) == n, 5, f"attempt {attempt}")
            await wait_for(pilot, lambda: banner.has_class("-failed"), 5, "the failure again")
        assert "not enough memory" in str(banner.query_one("#load-what").render())
        assert "the model is not loaded" in str(app.query_one(StatusBar).render())
        assert app.query_one(ChatInput).text == "hello?"
        assert not app.query(UserMessage) and not app.query(ReplyView)
    assert history.list_chats() == []


async def test_a_retry_that_works_sends_the_held_message(history: History, app_on: AppOn) -> None:
    attempts: list[int] = []
    app = app_on(failing_then(2, attempts))
    screen = app.chat_screen
    async with app.run_test() as pilot:
        banner = app.query_one(LoadingBanner)
        await wait_for(pilot, lambda: banner.has_class("-failed"), 5, "the first failure")
        await send(pilot, "hello?")
        await wait_for(
            pilot, lambda: len(app.query(ReplyView)) == 1 and not screen.busy, 5, "reply"
        )
        assert attempts == [1, 2] and not banner.display
        assert app.query_one(ChatInput).text == ""
        assert "Hello there." in app.query_one(ReplyView).answer_text
    (chat,) = history.list_chats()
    stored = history.messages(chat.id)
    assert [(m.role, m.status) for m in stored] == [("user", "complete"), ("assistant", "complete")]
    assert stored[0].content == "hello?"


async def test_a_held_message_is_not_sent_to_another_chat(history: History, app_on: AppOn) -> None:
    """The retry is slow; meanwhile the user opens another chat and starts a draft there: the
    held message must not go to that chat, and the draft must stay in the box."""
    import threading

    other = history.create_chat().id
    history.add_user_message(other, "an older question")
    gate, attempts = threading.Event(), []

    def factory(_progress: object) -> ScriptedBackend:
        attempts.append(1)
        if len(attempts) == 1:
            raise BackendError("not enough memory", kind="out_of_memory")
        gate.wait(10)
        return ScriptedBackend(reply("r", "An answer."))

    app = app_on(factory)
    screen = app.chat_screen
    async with app.run_test() as pilot:
        banner = app.query_one(LoadingBanner)
        await wait_for(pilot, lambda: banner.has_class("-failed"), 5, "the first failure")
        await send(pilot, "meant for a new chat")
        await wait_for(pilot, lambda: len(attempts) == 2, 5, "the retry")
        await screen.open_chat(other)
        app.query_one(ChatInput).text = "a draft for the older chat"
        gate.set()
        await wait_for(pilot, lambda: not banner.display, 5, "the model")
        await wait_for(pilot, lambda: any("not sent" in n for n in notifications(app)), 5)
        assert app.query_one(ChatInput).text == "a draft for the older chat"
        assert not app.query(ReplyView)
    assert [c.id for c in history.list_chats()] == [other]
    assert [m.content for m in history.messages(other)] == ["an older question"]
