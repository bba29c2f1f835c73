"""The first-run screen on a PC with two cards: the plan's split per card is shown."""

from __future__ import annotations

from dataclasses import replace

from first_run_helpers import machine, setup_for
from textual.widgets import Static
from tui_helpers import AppOn, wait_for

from gptoss_local.catalog import Catalog
from gptoss_local.tui.first_run import FirstRunScreen

GIB = 1 << 30


def two_cards():
    pc = machine(gpu_gib=16, ram_gib=64)
    (first,) = pc.gpus
    second = replace(first, index=1, name="NVIDIA GeForce RTX test 8 GB", total_vram=8 * GIB,
                     free_vram=8 * GIB - GIB // 2, pci_bus_id="00000000:02:00.0")  # fmt: skip
    return replace(pc, gpus=(replace(first, pci_bus_id="00000000:01:00.0"), second))


async def test_the_first_run_shows_each_cards_layers_and_share(app_on: AppOn, cat: Catalog) -> None:
    app = app_on(setup=setup_for(cat, two_cards(), gpus=(0, 1)))
    async with app.run_test(size=(100, 50)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, FirstRunScreen), what="the screen")
        plan = str(app.screen.query_one("#plan", Static).render())
        lines = plan.splitlines()
        at = next(i for i, line in enumerate(lines) if line.startswith("GPUs       GPU 0 RTX test"))
        assert lines[at + 1].startswith("           GPU 1 RTX test 8 GB: ")
        assert "output" in lines[at + 1] and "GiB usable" in lines[at + 1]
        assert "llama.cpp's layer split: GPU 0:" in plan
