"""Pilot tests of the live VRAM field in the status bar, with a fake NVML."""

from __future__ import annotations

from cards import card
from fake_nvml import GPU_IS_LOST, FakeNvml
from tui_helpers import AppOn, wait_for

from gptoss_local.hardware.vram import VramMonitor
from gptoss_local.tui.status import StatusBar


def _bar(app: object) -> str:
    return str(app.query_one(StatusBar).render())  # type: ignore[attr-defined]


async def test_the_status_bar_follows_vram_use_and_nvml_is_closed_on_exit(
    app_on: AppOn,
) -> None:
    gpu = card("4090", free_mib=23_400)  # 24,564 MiB in all
    nvml = FakeNvml([gpu])
    app = app_on([], vram=VramMonitor(nvml))
    screen = app.chat_screen
    screen.status.poller.interval = 0.02
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: "VRAM 1.1/24.0 GiB" in _bar(app), what="the first read")
        await wait_for(pilot, lambda: app.query_one(StatusBar).info is not None, what="model")
        assert _bar(app).index("entirely on the GPU") < _bar(app).index("VRAM")
        gpu.free_mib = 10_756  # the model is loading: 13,808 MiB used
        await wait_for(pilot, lambda: "VRAM 13.5/24.0 GiB" in _bar(app), what="the next read")
    assert nvml.shutdowns == 1


async def test_without_a_gpu_the_bar_shows_no_vram_and_polling_stops(app_on: AppOn) -> None:
    monitor = VramMonitor(FakeNvml([]))
    app = app_on([], vram=monitor)
    screen = app.chat_screen
    screen.status.poller.interval = 0.02
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: not monitor.available, what="the one read")
        await wait_for(pilot, lambda: app.query_one(StatusBar).info is not None, what="model")
        await pilot.pause(0.1)
        assert "VRAM" not in _bar(app) and not screen.status.polling


async def test_a_gpu_that_fails_later_takes_the_field_away(app_on: AppOn) -> None:
    gpu = card("4090")
    app = app_on([], vram=VramMonitor(FakeNvml([gpu])))
    screen = app.chat_screen
    screen.status.poller.interval = 0.02
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: "VRAM" in _bar(app), what="the first read")
        gpu.fail["memory"] = GPU_IS_LOST
        await wait_for(pilot, lambda: "VRAM" not in _bar(app), what="the field to go")
        assert not screen.status.polling


async def test_two_cards_show_their_vram_each(app_on: AppOn) -> None:
    first, second = card("4090", free_mib=23_400), card("3060", free_mib=11_500)
    app = app_on([], vram=VramMonitor(FakeNvml([first, second])))
    app.chat_screen.status.poller.interval = 0.02
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: "VRAM 1/24+1/12 GiB" in _bar(app), what="the first read")
        first.free_mib, second.free_mib = 2_000, 2_000  # both cards took their share
        await wait_for(pilot, lambda: "VRAM 22/24+10/12 GiB" in _bar(app), what="the next read")
        assert all(len(line) <= 80 for line in _bar(app).splitlines())
    async with app_on([], vram=VramMonitor(FakeNvml([first, second]))).run_test(
        size=(160, 24)
    ) as pilot:
        wide = pilot.app
        await wait_for(pilot, lambda: "VRAM 22.0/24.0 + 10.0/12.0 GiB" in _bar(wide),
                       what="the full form on a wide bar")  # fmt: skip
