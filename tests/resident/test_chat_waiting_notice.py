"""The chat app over the shared engine: while its reply waits behind another program's, the
status bar says for whom, and says nothing of it once the reply's tokens come."""

from __future__ import annotations

import threading
from pathlib import Path

from resident_helpers import resident_server
from tui_fixtures import fixture_app_on, fixture_history
from tui_helpers import AppOn, send, wait_for, wait_for_model

from gptoss_local.backends.openai.backend import OpenAIClientBackend
from gptoss_local.tui.status import StatusBar

__all__ = ["fixture_app_on", "fixture_history"]


async def test_the_chat_shows_whom_its_reply_waits_for(tiny_gguf: Path, app_on: AppOn) -> None:
    with resident_server(tiny_gguf, keep_alive=-1) as served:
        url = f"http://127.0.0.1:{served.port}/v1"
        app = app_on(lambda _progress: OpenAIClientBackend(url, "tiny", None, "chat 1"))
        other = threading.Thread(target=lambda: served.chat("gate", client="codex"))
        async with app.run_test() as pilot:
            await wait_for_model(pilot)
            bar = app.query_one(StatusBar)
            assert any("shared engine at" in fact.text for fact in bar.facts())
            other.start()
            assert served.gate.started.wait(60)
            await send(pilot, "hello")
            await wait_for(pilot, lambda: bar.note == "waiting for codex", 30, "the notice")
            served.gate.open.set()
            screen = app.chat_screen
            await wait_for(pilot, lambda: not screen.busy, 60, "the reply to end")
            assert bar.note == ""  # gone once its turn came
        other.join(60)
