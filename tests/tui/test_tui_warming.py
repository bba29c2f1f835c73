"""The app prefills the next prompt whenever the chat settles, and a send stops it first."""

from __future__ import annotations

import threading

from tui_helpers import AppOn, ScriptedBackend, reply, send_and_wait, wait_for, wait_for_model

from gptoss_local.backends.base import ReplyRequest


class SlowPrefill(ScriptedBackend):
    """A scripted backend whose prefill runs until it is cancelled (as a long history would)."""

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.cancelled = threading.Event()

    def prefill(self, request: ReplyRequest, cancel=None) -> int:  # type: ignore[no-untyped-def]
        self.prefills.append((request.conversation, request.settings))
        assert cancel is not None
        while not cancel.wait(0.005):
            pass
        self.cancelled.set()
        return 0


async def test_the_chat_is_prefilled_after_load_reply_effort_and_switch(app_on: AppOn) -> None:
    backend = ScriptedBackend(reply("thinking", "An answer."))
    app = app_on(backend)
    screen = app.chat_screen
    async with app.run_test() as pilot:
        await wait_for_model(pilot)
        await wait_for(pilot, lambda: len(backend.prefills) == 1, 5, "the prefill after load")
        conversation, settings = backend.prefills[0]
        assert conversation.messages == () and settings.effort == screen.state.effort  # a new chat
        await send_and_wait(pilot, "a question")
        await wait_for(pilot, lambda: len(backend.prefills) == 2, 5, "the prefill after reply")
        conversation, _ = backend.prefills[1]
        assert [m.role for m in conversation.messages] == ["user", "assistant"]
        assert conversation.messages[1].content == "An answer."
        await pilot.press("ctrl+o")  # effort: the system message changes
        await wait_for(pilot, lambda: len(backend.prefills) == 3, 5, "the prefill after effort")
        assert backend.prefills[2][1].effort == screen.state.effort != settings.effort
        await pilot.press("ctrl+n")  # a new chat: the prefix without the old messages
        await wait_for(pilot, lambda: len(backend.prefills) == 4, 5, "the prefill of a new chat")
        assert backend.prefills[3][0].messages == ()


async def test_sending_stops_a_prefill_in_progress(app_on: AppOn) -> None:
    backend = SlowPrefill(reply("thinking", "An answer."))
    app = app_on(backend)
    async with app.run_test() as pilot:
        await wait_for_model(pilot)
        await wait_for(pilot, lambda: len(backend.prefills) == 1, 5, "the prefill")
        assert not backend.cancelled.is_set()  # it runs until told to stop
        await send_and_wait(pilot, "a question")
        # Sending told the prefill to stop (keeping the two apart on the engine is the
        # backend's lock: tests/backends/test_llama_prefill.py).
        assert backend.cancelled.is_set() and backend.calls
        await pilot.press("ctrl+q")
