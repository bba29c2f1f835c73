"""One end-to-end chat in the TUI with the real llama.cpp engine on the tiny model (CPU)."""

from __future__ import annotations

from pathlib import Path

from engine_helpers import open_tiny, steered
from tui_helpers import open_history, run_async, send_and_wait, wait_for_model

from gptoss_local.tui.app import make_app
from gptoss_local.tui.status import StatusBar
from gptoss_local.tui.widgets import ReplyView


@run_async
async def test_a_reply_from_the_real_engine_arrives_and_is_saved(
    tiny_gguf: Path, tmp_path: Path
) -> None:
    backend = open_tiny(tiny_gguf)
    history = open_history(tmp_path)
    try:
        app = make_app(history, lambda _progress: backend, steered(backend, max_tokens=64))
        async with app.run_test() as pilot:
            await wait_for_model(pilot)
            await send_and_wait(pilot, "hi", timeout=120)
            view = app.query_one(ReplyView)
            assert view.answer_text == "Hello there"
            assert view.reasoning_text == "The user says hi"
            status = str(app.query_one(StatusBar).render())
            assert "tok/s" in status and "context" in status
        chat = history.get_chat(app.chat_id or 0)
        assert chat.backend == "llamacpp"
        user, answer = history.messages(chat.id)
        assert (user.content, answer.content, answer.status) == ("hi", "Hello there", "complete")
        assert answer.stats is not None and answer.stats.generated_tokens > 0
    finally:
        backend.close()
        history.close()
