"""The fit planner over real cards and machines, with realistic free VRAM and RAM."""

from __future__ import annotations

from dataclasses import replace

import pytest
from cards import card
from fake_nvml import FakeNvml

from gptoss_local import catalog
from gptoss_local.backends.llamacpp.load import LoadSettings
from gptoss_local.errors import UnknownModelError
from gptoss_local.hardware import machine as hardware
from gptoss_local.plan import memory
from gptoss_local.plan.planner import Plan, plan, ram_reserve, vram_margin
from gptoss_local.plan.wishes import Wishes

GIB = 1 << 30
MIB = 1 << 20


def machine(
    cards: list[str], ram_total_gib: float, ram_free_gib: float, free_mib: int | None = None
):
    """Hardware as the probe would report it, with chosen RAM and plenty of disk."""
    found = hardware.probe(FakeNvml([card(key, free_mib) for key in cards]))
    return replace(
        found,
        ram_total=int(ram_total_gib * GIB),
        ram_available=int(ram_free_gib * GIB),
        disk_free=2_000 * GIB,
    )


def assert_within_free_memory(hw: hardware.Hardware, p: Plan) -> None:
    """The plan's estimates stay under free memory less the stated margins."""
    free = sum(
        g.free_vram - vram_margin(g) for g in hw.gpus if p.gpu_indices and g.index in p.gpu_indices
    )
    assert p.est_vram <= free
    assert p.est_ram <= hw.ram_available - ram_reserve(hw)


# card(s), RAM total/available GiB, expected model, placement,
# layers with experts in RAM (min, max), smallest acceptable context
TABLE = [
    (["3060"], 32, 26, "gpt-oss-20b", "gpu+ram", (2, 6), 16_384),
    (["3080"], 32, 26, "gpt-oss-20b", "gpu+ram", (6, 12), 16_384),
    (["4060"], 32, 26, "gpt-oss-20b", "gpu+ram", (10, 18), 16_384),
    (["4060ti16"], 32, 26, "gpt-oss-20b", "gpu", (0, 0), 65_536),
    (["4070tis"], 32, 26, "gpt-oss-20b", "gpu", (0, 0), 65_536),
    (["4080"], 32, 26, "gpt-oss-20b", "gpu", (0, 0), 65_536),
    (["4090"], 64, 56, "gpt-oss-20b", "gpu", (0, 0), 131_072),
    (["5080"], 32, 26, "gpt-oss-20b", "gpu", (0, 0), 65_536),
    (["5090"], 64, 56, "gpt-oss-20b", "gpu", (0, 0), 131_072),
    (["a6000"], 128, 120, "gpt-oss-20b", "gpu", (0, 0), 131_072),
    (["6000ada"], 128, 120, "gpt-oss-20b", "gpu", (0, 0), 131_072),
    (["pro6000"], 128, 120, "gpt-oss-120b", "gpu", (0, 0), 131_072),
    (["4090", "4090"], 64, 56, "gpt-oss-20b", "gpu", (0, 0), 131_072),
    (["h200"], 128, 120, "gpt-oss-120b", "gpu", (0, 0), 131_072),
    ([], 32, 26, "gpt-oss-20b", "cpu", (0, 0), 16_384),
    (["gt1030"], 32, 26, "gpt-oss-20b", "cpu", (0, 0), 16_384),
]


@pytest.mark.parametrize(("cards", "ram", "ram_free", "model", "where", "layers", "min_ctx"), TABLE)
def test_plan_for_real_cards(cards, ram, ram_free, model, where, layers, min_ctx) -> None:
    hw = machine(cards, ram, ram_free)
    p = plan(hw, catalog.load())
    assert (p.model, p.placement, p.fits) == (model, where, True)
    assert layers[0] <= p.cpu_moe_layers <= layers[1]
    assert p.context >= min_ctx
    assert p.gpu_layers == (-1 if where != "cpu" else 0)
    assert p.flash_attn == (where != "cpu")
    assert_within_free_memory(hw, p)
    assert p.reasons and not p.warnings, p.warnings


def test_offload_takes_the_fewest_layers_that_fit() -> None:
    hw = machine(["3060"], 32, 26)
    p = plan(hw, catalog.load())
    spec = catalog.load().model(p.model)
    one_fewer = memory.Placement(1, p.cpu_moe_layers - 1, p.context)
    assert memory.estimate(spec, one_fewer).vram > p.vram_budget
    assert "stay in system RAM" in " ".join(p.reasons)


def test_two_gpus_are_summed_and_both_used() -> None:
    hw = machine(["4090", "4090"], 64, 56)
    p = plan(hw, catalog.load(), Wishes(model="120b"))
    assert p.gpu_indices == (0, 1)
    assert p.vram_budget == sum(g.free_vram - vram_margin(g) for g in hw.gpus)
    single = plan(machine(["4090"], 64, 56), catalog.load(), Wishes(model="120b"))
    assert p.cpu_moe_layers < single.cpu_moe_layers
    assert "splits the layers" in p.reasons[0]


def test_free_vram_not_total_decides() -> None:
    hw = machine(["4090"], 64, 56, free_mib=6_000)  # a game or another model holds most of it
    p = plan(hw, catalog.load())
    assert p.placement == "gpu+ram" and p.cpu_moe_layers >= 12
    assert_within_free_memory(hw, p)


def test_120b_on_a_24gb_card_when_asked_with_enough_ram() -> None:
    hw = machine(["4090"], 64, 58)
    p = plan(hw, catalog.load(), Wishes(model="120b"))
    assert (p.model, p.placement, p.fits) == ("gpt-oss-120b", "gpu+ram", True)
    assert 20 <= p.cpu_moe_layers < 36
    assert_within_free_memory(hw, p)


def test_explicit_choice_that_does_not_fit_is_kept_and_warned() -> None:
    hw = machine(["4090"], 32, 26)
    p = plan(hw, catalog.load(), Wishes(model="gpt-oss-120b"))
    assert (p.model, p.fits) == ("gpt-oss-120b", False)
    assert "will not fit" in p.warnings[0] and "RAM" in p.warnings[0]


def test_nothing_fits_is_a_refusal_that_names_what_is_missing() -> None:
    hw = machine([], 8, 6)
    p = plan(hw, catalog.load())
    assert (p.model, p.placement, p.fits) == (None, "none", False)
    assert "No model fits" in p.warnings[0] and "RAM" in p.warnings[0]


def test_tiny_ram_beside_a_small_gpu() -> None:
    hw = machine(["3060"], 4, 2.5)
    p = plan(hw, catalog.load())
    assert not p.fits and "RAM" in p.warnings[0]


def test_user_context_and_expert_count_are_honoured() -> None:
    hw = machine(["3060"], 32, 26)
    p = plan(hw, catalog.load(), Wishes(context=65_536))
    default = plan(hw, catalog.load())
    assert p.context == 65_536 and p.cpu_moe_layers > default.cpu_moe_layers
    fixed = plan(hw, catalog.load(), Wishes(cpu_moe_layers=10))
    assert fixed.cpu_moe_layers == 10 and fixed.fits


def test_small_card_is_left_out_with_a_note() -> None:
    p = plan(machine(["gt1030"], 32, 26), catalog.load())
    assert any("left out" in r for r in p.reasons)


def test_bigger_model_is_mentioned_when_it_would_run() -> None:
    p = plan(machine(["4090"], 128, 120), catalog.load())
    assert p.model == "gpt-oss-20b"
    assert any("gpt-oss-120b would also run" in r for r in p.reasons)


def test_warnings_for_ollama_offload_effort_and_disk() -> None:
    hw = machine(["3060"], 32, 26)
    ollama = plan(hw, catalog.load(), Wishes(backend="ollama"))
    assert any("Ollama cannot keep only the experts" in w for w in ollama.warnings)
    tight = plan(hw, catalog.load(), Wishes(context=8_192, effort="high"))
    assert any("High reasoning effort" in w for w in tight.warnings)
    no_disk = plan(replace(hw, disk_free=5 * GIB), catalog.load())
    assert any("of disk" in w for w in no_disk.warnings)


def test_speed_is_published_where_known_and_estimated_elsewhere() -> None:
    known = plan(machine(["4090"], 64, 56), catalog.load())
    assert known.speed.basis.startswith("published") and known.speed.high == 280
    estimated = plan(machine(["5080"], 64, 56), catalog.load())
    assert "bandwidth" in estimated.speed.basis and 0 < estimated.speed.low < estimated.speed.high
    offload = plan(machine(["3060"], 64, 56), catalog.load())
    assert offload.speed.high < known.speed.low


def test_unknown_model_is_a_key_error_listing_choices() -> None:
    with pytest.raises(UnknownModelError, match="20b"):
        plan(machine([], 32, 26), catalog.load(), Wishes(model="gpt-oss-7b"))


@pytest.mark.parametrize(
    ("cards", "load_mode"), [(["3060"], "none"), (["4090"], "auto"), ([], "auto")]
)
def test_experts_in_ram_beside_a_gpu_load_into_pinned_memory(cards, load_mode) -> None:
    p = plan(machine(cards, 32, 26), catalog.load())
    assert LoadSettings.from_plan(p).load_mode == load_mode


def test_least_context_an_agent_needs_is_kept_where_memory_allows() -> None:
    hw = machine(["3060"], 32, 26)
    default = plan(hw, catalog.load())
    agent = plan(hw, catalog.load(), Wishes(min_context=32_768))
    assert default.context < 32_768 <= agent.context and agent.fits
    assert agent.cpu_moe_layers >= default.cpu_moe_layers
    assert any("32,768 tokens or more" in r for r in agent.reasons)
    roomy = machine(["4090"], 64, 56)  # already more: the same placement
    same = plan(roomy, catalog.load(), Wishes(min_context=32_768))
    assert replace(same, reasons=()) == replace(plan(roomy, catalog.load()), reasons=())


def test_least_context_that_does_not_fit_falls_back_with_a_warning() -> None:
    spec = catalog.load().model("gpt-oss-20b")
    need = {ctx: memory.estimate(spec, memory.Placement(0, 0, ctx, "f16")).ram
            for ctx in (16_384, 32_768)}  # fmt: skip
    between = (need[16_384] + need[32_768]) / 2
    total_gib = 64
    hw = machine([], total_gib, (between + ram_reserve(machine([], total_gib, 1))) / GIB)
    p = plan(hw, catalog.load(), Wishes(min_context=32_768))
    assert p.fits and p.context == 16_384
    assert any("32,768 tokens does not fit" in w for w in p.warnings)
    assert not any("tokens or more" in r for r in p.reasons)


def test_a_context_beyond_the_model_is_cut_with_a_warning_that_says_so() -> None:
    hw = machine(["4090"], 64, 56)
    p = plan(hw, catalog.load(), Wishes(context=200_000))
    assert p.context == 131_072 and p.fits
    assert any(
        "gpt-oss-20b holds at most 131,072 tokens of context; using that instead of the "
        "200,000 asked for" in w
        for w in p.warnings
    )
    tiny = plan(hw, catalog.load(), Wishes(context=100))
    assert tiny.context == 2_048 and any(
        "100-token context is too small" in w for w in tiny.warnings
    )
    assert not any(
        "asked for" in w for w in plan(hw, catalog.load(), Wishes(context=65_536)).warnings
    )


def test_effort_advice_stays_within_what_the_model_holds() -> None:
    spec = catalog.load().model("gpt-oss-20b")
    small = replace(spec, shape=replace(spec.shape, context_max=4_096))
    hw = machine(["4090"], 64, 56)
    p = plan(hw, catalog.load(), Wishes(context=8_192), spec=small)
    assert p.context == 4_096
    assert any("holds at most 4,096 tokens" in w for w in p.warnings)
    effort = [w for w in p.warnings if "reasoning effort" in w]
    assert effort and "the most this model holds" in effort[0] and "8,192" not in effort[0]
    assert "--effort low" in effort[0]
    short = plan(hw, catalog.load(), Wishes(context=2_048, effort="high"), spec=small)
    assert any("use 4,096 or more" in w for w in short.warnings)
