"""Where the plan lets drafts run, and the room an EAGLE-3 head takes on the GPU."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from test_planner import GIB, machine

from gptoss_local import catalog
from gptoss_local.plan.drafting import (
    HEAD_COMPUTE_BYTES,
    HEAD_KV_BYTES_PER_TOKEN,
    head_vram,
    why_drafts_do_not_pay,
)
from gptoss_local.plan.planner import plan
from gptoss_local.plan.wishes import Wishes


def test_drafts_run_only_with_the_whole_model_on_the_gpu() -> None:
    shipped = catalog.load()
    on_gpu = plan(machine(["4090"], 64, 56), shipped, Wishes(model="gpt-oss-20b"))
    assert on_gpu.placement == "gpu" and why_drafts_do_not_pay(on_gpu) is None
    in_ram = plan(machine(["3060"], 32, 26), shipped, Wishes(model="gpt-oss-20b"))
    assert in_ram.placement == "gpu+ram"
    assert "part of the model in system RAM" in (why_drafts_do_not_pay(in_ram) or "")
    cpu = plan(machine([], 64, 56), shipped, Wishes(model="gpt-oss-20b"))
    assert "runs on the CPU" in (why_drafts_do_not_pay(cpu) or "")


def test_a_head_asked_for_takes_its_room_from_the_gpu(tmp_path: Path) -> None:
    head = tmp_path / "head.gguf"
    with head.open("wb") as f:  # sparse: its size is what counts
        f.truncate(2 * GIB)
    hw, shipped = machine(["4090"], 64, 56), catalog.load()
    wishes = Wishes(model="gpt-oss-20b", context=65_536)
    headed = replace(wishes, draft="eagle3", draft_model=head)
    expected = 2 * GIB + HEAD_KV_BYTES_PER_TOKEN * 65_536 + HEAD_COMPUTE_BYTES
    assert head_vram(headed) == expected
    assert head_vram(replace(headed, draft="ngram")) == 0
    assert head_vram(replace(headed, draft_model=tmp_path / "missing.gguf")) == 0
    without, with_head = plan(hw, shipped, wishes), plan(hw, shipped, headed)
    assert without.vram_budget - with_head.vram_budget == expected
    assert with_head.est_vram <= with_head.vram_budget
