"""The planner's micro-batch: larger where VRAM allows, weighed against experts pushed to RAM."""

from __future__ import annotations

from dataclasses import replace

import pytest
from test_planner import assert_within_free_memory, machine

from gptoss_local import catalog
from gptoss_local.backends.llamacpp.load import LoadSettings
from gptoss_local.plan import batching, memory
from gptoss_local.plan.planner import plan
from gptoss_local.plan.wishes import Wishes


def at_smallest(hw, wishes: Wishes):
    """The plan as it would be if micro-batches could not grow."""
    saved = batching.MICRO_BATCHES
    batching.MICRO_BATCHES = (batching.SMALLEST,)
    try:
        return plan(hw, catalog.load(), wishes)
    finally:
        batching.MICRO_BATCHES = saved


@pytest.mark.parametrize("cards", [["4090"], ["5090"], ["a6000"]])
def test_a_roomy_card_gets_the_largest_micro_batch_at_the_same_context(cards) -> None:
    hw = machine(cards, 64, 56)
    p = plan(hw, catalog.load())
    small = at_smallest(hw, Wishes())
    assert (p.placement, p.cpu_moe_layers, p.context) == ("gpu", 0, small.context)
    assert p.n_ubatch == 4096 and p.n_batch >= p.n_ubatch
    assert p.est_vram > small.est_vram
    assert_within_free_memory(hw, p)
    assert any("4,096 tokens at a time" in r for r in p.reasons)


def test_an_all_gpu_plan_never_gives_up_context_or_layers_for_a_micro_batch() -> None:
    # A 16 GB card holds 20b entirely on the GPU only at a reduced context: the micro-batch
    # takes what is left, if anything, and the plan stays as it was otherwise.
    hw = machine(["4060ti16"], 32, 26)
    p, small = plan(hw, catalog.load()), at_smallest(hw, Wishes())
    assert (p.placement, p.cpu_moe_layers, p.context) == ("gpu", 0, small.context)
    spec = catalog.load().model(p.model)
    larger = [u for u in batching.MICRO_BATCHES if u > p.n_ubatch]
    for ubatch in larger:
        placement = memory.Placement(1, 0, p.context, n_ubatch=ubatch)
        assert memory.estimate(spec, placement).vram > p.vram_budget


def test_many_layers_in_ram_trade_a_little_decode_for_a_larger_micro_batch() -> None:
    # 120b on a 24 GB card keeps most experts in RAM; each 512-token micro-batch copies them
    # all to the GPU, so a larger one is worth a layer or two more in RAM.
    hw = machine(["4090"], 128, 120)
    wishes = Wishes(model="120b")
    p, small = plan(hw, catalog.load(), wishes), at_smallest(hw, wishes)
    assert p.placement == small.placement == "gpu+ram"
    assert p.n_ubatch > batching.SMALLEST
    assert small.cpu_moe_layers <= p.cpu_moe_layers <= small.cpu_moe_layers + 3
    assert p.context == small.context
    spec = catalog.load().model(p.model)
    turn = batching.turn_seconds
    chosen = memory.Placement(1, p.cpu_moe_layers, p.context, n_ubatch=p.n_ubatch)
    before = memory.Placement(1, small.cpu_moe_layers, small.context, n_ubatch=small.n_ubatch)
    assert turn(spec, None, chosen) < turn(spec, None, before)
    assert_within_free_memory(hw, p)


def test_few_layers_in_ram_keep_the_small_micro_batch_when_it_would_cost_decode() -> None:
    # 20b on a 12 GB card: a larger micro-batch pushes another layer's experts to RAM, which
    # costs every reply token more than it saves on the few layers' copies.
    hw = machine(["3060"], 32, 26)
    p, small = plan(hw, catalog.load()), at_smallest(hw, Wishes())
    assert (p.cpu_moe_layers, p.n_ubatch) == (small.cpu_moe_layers, batching.SMALLEST)
    spec = catalog.load().model(p.model)
    one_more = memory.Placement(1, p.cpu_moe_layers + 1, p.context, n_ubatch=1024)
    here = memory.Placement(1, p.cpu_moe_layers, p.context, n_ubatch=p.n_ubatch)
    assert batching.turn_seconds(spec, None, one_more) > batching.turn_seconds(spec, None, here)


def test_layers_the_user_chose_stay_as_chosen() -> None:
    hw = machine(["4090"], 128, 120)
    p = plan(hw, catalog.load(), Wishes(model="120b", cpu_moe_layers=30))
    assert p.cpu_moe_layers == 30 and p.n_ubatch == 4096


def test_the_cpu_keeps_the_small_micro_batch() -> None:
    hw = replace(machine([], 64, 56))
    p = plan(hw, catalog.load())
    assert (p.placement, p.n_ubatch) == ("cpu", batching.SMALLEST)


def test_the_loader_gets_the_plans_batches() -> None:
    p = plan(machine(["4090"], 64, 56), catalog.load())
    settings = LoadSettings.from_plan(p)
    assert (settings.n_ubatch, settings.n_batch) == (4096, 4096)
