"""The planner over several cards (fake NVML): every card's share within that card's usable
VRAM, the split as llama.cpp will place it, the fewest layers' experts in RAM that let every
card fit, cards left out with a reason, and `--gpus`."""

from __future__ import annotations

import itertools
import struct
from bisect import bisect_right
from dataclasses import replace

import pytest
from fake_nvml import FakeCard, FakeNvml

from gptoss_local import catalog, cli, config
from gptoss_local.hardware import machine as hardware
from gptoss_local.plan import batching, memory, planner, split
from gptoss_local.plan.planner import Plan, plan, vram_margin
from gptoss_local.plan.text import card_lines
from gptoss_local.plan.wishes import Wishes, wishes_from

GIB = 1 << 30


def gpu(total_gib: int, name: str, used_mib: int = 600) -> FakeCard:
    """A card with its total VRAM and a desktop's worth in use."""
    return FakeCard(f"NVIDIA GeForce {name}", total_gib * 1024, total_gib * 1024 - used_mib)


def layer_cards(tensor_split: tuple[float, ...], layers: int) -> list[int]:
    """The card of each slot (the layers, then the output layer) as llama.cpp assigns them from
    `tensor_split` with every layer offloaded (`load_tensors` in `llama-model.cpp`): running
    sums normalised, then for slot `s` the first card whose sum is above `s / (layers + 1)`, all
    in float32."""
    sums, total = [], _f32(0.0)
    for share in tensor_split:
        total = _f32(total + _f32(share))
        sums.append(total)
    bounds = [_f32(value / total) for value in sums]
    slots = layers + 1
    return [bisect_right(bounds, _f32(_f32(slot) / slots)) for slot in range(slots)]


def _f32(value: float) -> float:
    """`value` rounded to float32, as C's float holds it (an operation on two float32 values
    done in double and rounded once gives the float32 result)."""
    return float(struct.unpack("f", struct.pack("f", value))[0])


SETS = {
    "2x24": [gpu(24, "RTX 3090"), gpu(24, "RTX 3090")],
    "24+12": [gpu(24, "RTX 4090"), gpu(12, "RTX 3060")],
    "3x16": [gpu(16, "RTX 4080"), gpu(16, "RTX 4080"), gpu(16, "RTX 4080")],
    "16+8": [gpu(16, "RTX 4080"), gpu(8, "RTX 4060")],
}


def machine(cards: list[FakeCard], environ: dict[str, str] | None = None) -> hardware.Hardware:
    found = hardware.probe(FakeNvml(cards), environ=environ or {})
    return replace(found, ram_total=128 * GIB, ram_available=120 * GIB, disk_free=2_000 * GIB)


def usable(hw: hardware.Hardware, index: int) -> int:
    card = hw.gpus[index]
    return card.free_vram - vram_margin(card)


def placement_of(p: Plan, layers: int | None = None) -> memory.Placement:
    moved = p.cpu_moe_layers if layers is None else layers
    count = len(p.gpu_indices)
    return memory.Placement(count, moved, p.context, p.kv_type, p.n_ubatch)


def fill(p: Plan, hw: hardware.Hardware, spec, counts: tuple[int, ...], layers: int) -> float:
    """The fullest card's share of its usable VRAM with these slots per card."""
    est = memory.estimate(spec, replace(placement_of(p, layers), split=counts))
    budgets = [usable(hw, i) for i in p.gpu_indices]
    return max(need / budget for need, budget in zip(est.cards, budgets, strict=True))


def every_split(slots: int, cards: int):
    """Every way of giving `cards` cards runs of at least one of `slots` slots."""
    for cuts in itertools.combinations(range(1, slots), cards - 1):
        bounds = (0, *cuts, slots)
        yield tuple(b - a for a, b in itertools.pairwise(bounds))


# The machines: cards, model → cards used, experts kept in RAM (a range: the
# estimate's constants may move), least context.
CASES = [
    ("2x24", "20b", (0,), (0, 0), 131_072),
    ("2x24", "120b", (0, 1), (8, 18), 16_384),
    ("24+12", "20b", (0,), (0, 0), 131_072),
    ("24+12", "120b", (0, 1), (14, 26), 16_384),
    ("3x16", "20b", (0, 1), (0, 0), 131_072),
    ("3x16", "120b", (0, 1, 2), (8, 20), 16_384),
    ("16+8", "20b", (0, 1), (0, 0), 98_304),
    ("16+8", "120b", (0, 1), (22, 32), 16_384),
]


@pytest.mark.parametrize(("cards", "model", "used", "moved", "least"), CASES)
def test_every_cards_share_fits_that_card(cards, model, used, moved, least) -> None:
    hw = machine(SETS[cards])
    p = plan(hw, catalog.load(), Wishes(model=model))
    spec = catalog.load().model(p.model)
    assert p.fits and p.gpu_indices == used, p.reasons
    assert moved[0] <= p.cpu_moe_layers <= moved[1] and p.context >= least
    assert [c.index for c in p.cards] == list(used)
    for share in p.cards:
        assert share.est_vram <= share.usable == usable(hw, share.index)
    assert p.est_vram == sum(c.est_vram for c in p.cards) <= p.vram_budget
    if len(used) == 1:
        assert p.tensor_split == () and p.cards[0].layers == spec.shape.layers
        return
    # The split covers every layer and the output layer, each card a run, the output last.
    assert sum(p.tensor_split) == spec.shape.layers + 1 and min(p.tensor_split) >= 1
    assert [c.first_layer for c in p.cards] == [sum(p.tensor_split[:i]) for i in range(len(used))]
    assert [c.output for c in p.cards] == [False] * (len(used) - 1) + [True]
    assert sum(c.experts_in_ram for c in p.cards) == p.cpu_moe_layers
    # What llama.cpp makes of the split is the plan's runs of layers.
    slots = layer_cards(tuple(float(n) for n in p.tensor_split), spec.shape.layers)
    assert slots == [card for card, n in enumerate(p.tensor_split) for _ in range(n)]
    # The split is the most even there is: no other run of layers fills the fullest card less.
    best = fill(p, hw, spec, p.tensor_split, p.cpu_moe_layers)
    assert best <= 1.0
    assert all(
        fill(p, hw, spec, counts, p.cpu_moe_layers) >= best - 1e-12
        for counts in every_split(spec.shape.layers + 1, len(used))
    )


@pytest.mark.parametrize("widen", [True, False], ids=["widest-micro-batch", "smallest-only"])
@pytest.mark.parametrize(
    ("cards", "model"), [(c, m) for c, m, *_ in CASES if m == "120b"] + [("16+8", "20b")]
)
def test_the_experts_in_ram_are_the_fewest_that_fit_every_card(
    cards, model, widen, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not widen:  # the fewest layers found before any micro-batch is weighed
        monkeypatch.setattr(batching, "MICRO_BATCHES", (batching.SMALLEST,))
    hw = machine(SETS[cards])
    p = plan(hw, catalog.load(), Wishes(model=model))
    spec = catalog.load().model(p.model)
    if p.cpu_moe_layers == 0:  # everything on the cards: the context is the largest that fits
        wider = replace(placement_of(p), context=p.context * 2)
        counts = split.best_split(spec, wider, tuple(usable(hw, i) for i in p.gpu_indices))
        assert p.context == 131_072 or fill(p, hw, spec, counts, 0) > 1.0
        return
    # One layer fewer overflows some card, whatever the split (at this context and
    # micro-batch); llama.cpp could not place it.
    fewer = p.cpu_moe_layers - 1
    assert all(
        fill(p, hw, spec, counts, fewer) > 1.0
        for counts in every_split(spec.shape.layers + 1, len(p.gpu_indices))
    )


def test_the_split_follows_the_cards_not_the_layer_count() -> None:
    # 24 + 12 GB: the larger card takes more than twice the layers, since the first layers'
    # experts are in RAM and it holds those; proportional to layers would overflow the small one.
    hw = machine(SETS["24+12"])
    p = plan(hw, catalog.load(), Wishes(model="120b"))
    spec = catalog.load().model(p.model)
    big, small = p.cards
    assert big.layers > 2 * small.layers and small.output
    by_layers = (25, 12)  # llama.cpp's -ts 24,12 shares the 37 slots 2:1
    assert fill(p, hw, spec, by_layers, p.cpu_moe_layers) > 1.0
    fills = [c.est_vram / c.usable for c in p.cards]
    assert max(fills) - min(fills) < 0.2  # filled alike, as whole layers allow


def test_a_model_that_fits_one_card_stays_on_it_and_says_why_the_other_is_left_out() -> None:
    p = plan(machine(SETS["2x24"]), catalog.load(), Wishes(model="20b"))
    assert p.gpu_indices == (0,) and p.placement == "gpu" and p.context == 131_072
    (left,) = p.left_out
    assert left.index == 1 and "runs as well on fewer cards" in left.reason
    assert left.reason in p.reasons


def test_a_small_card_takes_the_output_layer_and_spares_the_large_one() -> None:
    small = FakeCard("NVIDIA GeForce GTX 1650", 4_096, 2_950)  # 2.4 GiB usable
    hw = machine([gpu(24, "RTX 4090"), small])
    p = plan(hw, catalog.load(), Wishes(model="120b"))
    alone = plan(machine([gpu(24, "RTX 4090")]), catalog.load(), Wishes(model="120b"))
    assert p.gpu_indices == (0, 1) and p.cards[1].layers == 0 and p.cards[1].output
    assert p.cpu_moe_layers < alone.cpu_moe_layers
    assert any("GPU 1: the output layer" in r for r in p.reasons)


def test_cards_too_full_or_too_small_to_help_are_left_out_with_the_reason() -> None:
    full = FakeCard("NVIDIA GeForce RTX 3060", 12_288, 1_500)  # a game holds most of it
    p = plan(machine([gpu(24, "RTX 4090"), full]), catalog.load(), Wishes(model="120b"))
    assert p.gpu_indices == (0,) and "has only 1.5 GiB free" in p.left_out[0].reason
    # A card below what one layer or the output layer needs at this micro-batch.
    spec = catalog.load().model("120b")
    hw = machine([gpu(24, "RTX 4090"), FakeCard("NVIDIA GeForce GTX 1650", 4_096, 2_950)])
    wide = memory.Placement(1, 20, 16_384, n_ubatch=4_096)
    (left,) = planner._unused(spec, wide, hw.gpus, hw.gpus[:1], Wishes())
    assert left.index == 1 and "GTX 1650" in left.reason and "too small to help" in left.reason
    roomy = machine([gpu(24, "RTX 4090"), gpu(24, "RTX 4090")])
    (left,) = planner._unused(spec, wide, roomy.gpus, roomy.gpus[:1], Wishes())
    assert "runs as well on fewer cards" in left.reason


def test_gpus_picks_the_cards_and_their_order() -> None:
    hw = machine(SETS["3x16"])
    p = plan(hw, catalog.load(), Wishes(model="20b", gpus=(2, 0)))
    assert p.gpu_indices == (2, 0) and [c.index for c in p.cards] == [2, 0]
    assert p.cards[1].output and p.cards[0].first_layer == 0
    assert [x.index for x in p.left_out] == [1]
    assert "not among the GPUs asked for (2,0)" in p.left_out[0].reason
    one = plan(hw, catalog.load(), Wishes(model="20b", gpus=(1,)))
    assert one.gpu_indices == (1,) and one.tensor_split == ()
    # Asked for both even where one would do: both are used.
    both = plan(machine(SETS["2x24"]), catalog.load(), Wishes(model="20b", gpus=(0, 1)))
    assert both.gpu_indices == (0, 1) and len(both.tensor_split) == 2


def test_a_gpu_that_does_not_exist_is_a_warning() -> None:
    p = plan(machine(SETS["16+8"]), catalog.load(), Wishes(gpus=(1, 7)))
    assert p.gpu_indices == (1,)
    assert any("GPU 7 was asked for, but this PC has no such GPU (found: 0, 1)" in w
               for w in p.warnings)  # fmt: skip


def test_cards_hidden_by_cuda_visible_devices_are_left_out() -> None:
    cards = SETS["3x16"]
    hw = machine(cards, {"CUDA_VISIBLE_DEVICES": "2,0"})
    assert [g.cuda_visible for g in hw.gpus] == [True, False, True]
    p = plan(hw, catalog.load(), Wishes(model="120b"))
    assert p.gpu_indices == (0, 2)
    assert "hidden by CUDA_VISIBLE_DEVICES" in p.left_out[0].reason
    uuid = machine(cards).gpus[1].uuid
    assert uuid is not None
    by_uuid = machine(cards, {"CUDA_VISIBLE_DEVICES": uuid[:12]})
    assert [g.cuda_visible for g in by_uuid.gpus] == [False, True, False]
    assert not any(g.cuda_visible for g in machine(cards, {"CUDA_VISIBLE_DEVICES": ""}).gpus)
    stops = machine(cards, {"CUDA_VISIBLE_DEVICES": "1,x,2"})  # CUDA stops at a bad entry
    assert [g.cuda_visible for g in stops.gpus] == [False, True, False]


def test_doctor_lines_show_each_cards_layers_and_share() -> None:
    p = plan(machine(SETS["24+12"]), catalog.load(), Wishes(model="120b"))
    first, second = card_lines(p)
    assert first.startswith("GPU 0 RTX 4090: layers 0–") and "(experts of" in first
    assert second.startswith("GPU 1 RTX 3060: layers ") and "–35 + output;" in second
    assert "GiB usable" in second and "free" in second
    assert any("llama.cpp's layer split: GPU 0:" in r for r in p.reasons)


def test_ollama_says_it_cannot_follow_the_split() -> None:
    p = plan(machine(SETS["24+12"]), catalog.load(), Wishes(model="120b", backend="ollama"))
    assert any("Ollama shares a model among the GPUs its own way" in w for w in p.warnings)
    one = plan(machine(SETS["2x24"]), catalog.load(), Wishes(model="20b", backend="ollama"))
    assert not any("its own way" in w for w in one.warnings)
    asked = Wishes(model="20b", backend="ollama", gpus=(1,))
    assert any("its own way" in w for w in plan(machine(SETS["2x24"]), catalog.load(),
                                                 asked).warnings)  # fmt: skip


def test_nothing_fits_several_cards_still_shows_each_cards_share() -> None:
    small = [gpu(8, "RTX 4060"), gpu(8, "RTX 4060")]
    hw = replace(machine(small), ram_total=32 * GIB, ram_available=20 * GIB)
    p = plan(hw, catalog.load(), Wishes(model="120b"))
    assert not p.fits and p.model == "gpt-oss-120b"
    assert len(p.cards) == 2 and "will not fit" in p.warnings[0]


@pytest.mark.parametrize("command", ["doctor", "run", "bench", "chat", "serve", "codex"])
def test_every_command_that_plans_takes_gpus(command: str) -> None:
    args = cli._parse([command, "--gpus", "1,0"])
    assert args.gpus == (1, 0)
    assert wishes_from(args, config.Settings()).gpus == (1, 0)


def test_gpus_on_the_command_line_win_over_the_setting_and_auto_clears_it() -> None:
    setting = config.Settings(gpus="0,1")
    assert wishes_from(cli._parse(["doctor"]), setting).gpus == (0, 1)
    assert wishes_from(cli._parse(["doctor", "--gpus", "1"]), setting).gpus == (1,)
    assert wishes_from(cli._parse(["doctor", "--gpus", "auto"]), setting).gpus is None
    assert wishes_from(cli._parse(["doctor"]), config.Settings()).gpus is None
    assert "gpus" in wishes_from(cli._parse(["doctor", "--gpus", "0"]), setting).given


@pytest.mark.parametrize("bad", ["0,0", "a", "-1", "0,,1", "1.5"])
def test_gpus_that_name_no_cards_are_refused(bad: str, capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as exited:
        cli._parse(["doctor", "--gpus", bad])
    assert exited.value.code == 2 and "different GPU numbers" in capsys.readouterr().err
    with pytest.raises(ValueError, match="gpus must list"):
        config.Settings(gpus=bad).validate()


def test_the_gpus_setting_is_read_and_saved(tmp_path) -> None:
    path = tmp_path / "settings.toml"
    config.save(config.Settings(gpus="1,0"), path)
    assert 'gpus = "1,0"' in path.read_text()
    assert config.load(path).gpus == "1,0"


def test_doctor_shows_the_split_per_card_in_text_and_json(
    cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setattr(hardware, "load_nvml", lambda: FakeNvml(SETS["16+8"]))
    code, out, _ = cli("doctor", "--model", "20b", "--gpus", "0,1", "--context", "131072")
    assert code == 0
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("  GPUs       GPU 0 RTX 4080"))
    assert lines[at + 1].startswith("             GPU 1 RTX 4060: layers ")
    assert "+ output;" in lines[at + 1] and "GiB usable" in lines[at + 1]
    doc = json.loads(cli("doctor", "--json", "--model", "20b", "--gpus", "0,1")[1])["plan"]
    assert doc["gpu_indices"] == [0, 1] and len(doc["tensor_split"]) == 2
    assert [c["index"] for c in doc["cards"]] == [0, 1] and doc["cards"][1]["output"] is True
    assert doc["cards"][0]["pci_bus_id"] == "00000000:01:00.0" and doc["left_out"] == []
