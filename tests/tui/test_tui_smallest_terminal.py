"""80x24 is the smallest terminal the app serves whole: the status bar's facts all shown, none
cut, and the set-up screen's buttons on screen (F9, here with a --model-path file)."""

from __future__ import annotations

from pathlib import Path

from cards import card
from fake_nvml import FakeNvml
from first_run_helpers import chat_args, machine
from textual.widgets import Button
from tui_helpers import AppOn, ScriptedBackend, reply, screen_lines, send_and_wait, wait_for

from gptoss_local import catalog, config
from gptoss_local.hardware.vram import VramMonitor
from gptoss_local.launch.preparation import Preparation
from gptoss_local.plan.wishes import wishes_from
from gptoss_local.tui.first_run import FirstRunScreen
from gptoss_local.tui.status import StatusBar


async def test_the_chat_and_the_set_up_screen_fit_80_by_24(app_on: AppOn, tiny_gguf: Path) -> None:
    settings = config.load()
    wishes = wishes_from(chat_args(model_path=tiny_gguf), settings)
    setup = Preparation(machine(), catalog.load(), settings, wishes, first_run=False)
    backend = ScriptedBackend(reply("r", "a"))
    backend.context_used = 7000  # the warning too: the bar at its longest
    app = app_on(backend, setup=setup, vram=VramMonitor(FakeNvml([card("4090")])))
    async with app.run_test(size=(80, 24)) as pilot:
        await send_and_wait(pilot, "hello")
        status = app.query_one(StatusBar)
        await wait_for(pilot, lambda: status.vram is not None, what="the VRAM read")
        await pilot.pause()
        shown = [line.strip() for line in screen_lines(app, status.content_region)]
        assert "…" not in "".join(shown)  # nothing ellipsised
        facts = " · ".join(shown).split(" · ")
        expected = [fact.short for fact in status.facts() if fact.short]
        assert facts == expected
        for fact in ("⚠ context 85 % full", "gpt-oss-test", "effort medium", "scripted"):
            assert fact in facts
        await pilot.press("f9")
        await wait_for(pilot, lambda: isinstance(app.screen, FirstRunScreen), what="set-up")
        await pilot.pause()
        buttons = [b for b in app.screen.query(".buttons Button").results(Button) if b.display]
        assert buttons and all(app.screen.region.contains_region(b.region) for b in buttons)
