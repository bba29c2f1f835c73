"""The chat's status bar over the shared engine at 80x24: one line, as a local model's would be,
the engine's address left out of the short form ("shared engine" kept), and said whole where the
bar has room."""

from __future__ import annotations

from pathlib import Path

from resident_helpers import resident_server
from tui_fixtures import fixture_app_on, fixture_history
from tui_helpers import AppOn, screen_lines, send_and_wait, wait_for_model

from gptoss_local.backends.base import GenerationSettings
from gptoss_local.backends.openai.backend import OpenAIClientBackend
from gptoss_local.tui.status import StatusBar, lines

__all__ = ["fixture_app_on", "fixture_history"]


async def test_the_bar_over_the_engine_keeps_to_one_line_of_80_columns(
    tiny_gguf: Path, app_on: AppOn
) -> None:
    with resident_server(tiny_gguf, keep_alive=-1) as served:
        url = f"http://127.0.0.1:{served.port}/v1"
        # A seeded draw: an unseeded one may end the reply at its first token, with no text to time.
        app = app_on(
            lambda _progress: OpenAIClientBackend(url, "tiny", None, "chat 1"),
            generation=GenerationSettings(seed=1),
        )
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for_model(pilot)
            bar = app.query_one(StatusBar)
            await send_and_wait(pilot, "hello", timeout=60)
            assert bar.stats is not None and bar.stats.ttft_seconds is not None
            shown = [line.strip() for line in screen_lines(app, bar.content_region)]
            facts = bar.facts()
    assert len(shown) == 1 and "…" not in shown[0], shown  # one line, nothing cut
    said = shown[0].split(" · ")
    assert said[0] == "tiny" and "shared engine" in said and said[-1] == "shared engine"
    assert any(fact.text.startswith("TTFT") for fact in facts)  # the reply's figures too
    # Where the bar has room, the address and the client's backend are said as well.
    (wide,) = lines(facts, 200)
    assert "shared engine at 127.0.0.1  ·  openai" in wide
