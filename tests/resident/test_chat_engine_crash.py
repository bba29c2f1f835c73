"""A crash of the machine's engine under the chat loses no chat (its history is the chat's),
and the chat's next message finds the model again: here, with no engine to start
(`engine_start` off), the chat loads its own copy, as it does where no engine runs."""

from __future__ import annotations

from pathlib import Path

from serve_helpers import serve_process
from tui_fixtures import fixture_app_on, fixture_history
from tui_helpers import AppOn, send_and_wait, wait_for, wait_for_model

from gptoss_local import config
from gptoss_local.cli import build_parser
from gptoss_local.commands.chat import shared
from gptoss_local.launch.prepare import prepare
from gptoss_local.plan.wishes import wishes_from
from gptoss_local.session.history import History
from gptoss_local.tui.status import StatusBar

__all__ = ["fixture_app_on", "fixture_history"]


async def test_the_next_message_after_an_engine_crash_is_answered(
    tiny_gguf: Path, isolated_home: Path, app_on: AppOn, history: History
) -> None:
    args = build_parser().parse_args(["chat", "--model-path", str(tiny_gguf), "--context", "2048"])
    settings = config.load()
    with serve_process(tiny_gguf, isolated_home) as served:
        wishes = wishes_from(args, settings)
        ready = shared(prepare(wishes, settings, ask_first=True).ready, wishes, settings)
        assert ready is not None
        app = app_on(ready.open)
        async with app.run_test() as pilot:
            await wait_for_model(pilot)
            bar = app.query_one(StatusBar)
            assert bar.info is not None and bar.info.placement.startswith("shared engine at")
            await send_and_wait(pilot, "first", timeout=60)
            served.process.kill()  # the engine crashes between two messages
            served.process.wait(30)
            await send_and_wait(pilot, "second", timeout=120)
            (chat,) = history.list_chats()
            statuses = [m.status for m in history.messages(chat.id)]
            assert statuses[-1] == "complete", statuses
            here = lambda: bar.info is not None and bar.info.placement == "CPU"  # noqa: E731
            await wait_for(pilot, here, 30, "the model loaded here")  # the load's report
            stored = history.messages(chat.id)
    assert [m.role for m in stored] == ["user", "assistant", "user", "assistant"]
    assert [m.status for m in stored if m.role == "assistant"] == ["complete", "complete"]
