"""The two-GPU proof script (bench/gpu/multi_gpu.py) rehearsed without a GPU: the dry run's
plans and llama-bench command lines, the ballast's steps to a target, the measuring child on
the tiny model (the split passed to a CPU-only llama.cpp), and the verdicts and table."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import ballast  # bench/gpu is on pytest's pythonpath (pyproject.toml)
import multi_gpu
import pytest
from multi_gpu_report import judge, summary_lines

from gptoss_local import catalog


def test_the_dry_run_plans_every_run_with_a_split_and_llama_bench_follows_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "argv", ["multi_gpu.py", "--out", str(tmp_path), "--dry-run"])
    multi_gpu.main()
    rows = json.loads((tmp_path / "multi-gpu.json").read_text())
    assert [r["run"] for r in rows] == [run.name for run in multi_gpu.RUNS]
    for row in rows:
        plan = row["plan"]
        layers = catalog.load().model(row["run"].split()[0]).shape.layers
        assert plan["fits"] and plan["gpu_indices"] == [0, 1]
        assert sum(plan["tensor_split"]) == layers + 1
        assert all(c["est_vram"] <= c["usable"] for c in plan["cards"])
        command = row["llama_bench_command"]
        split = "/".join(map(str, plan["tensor_split"]))
        assert f"-sm layer -dev CUDA0/CUDA1 -ncmoe {plan['cpu_moe_layers']}" in command
        assert command.endswith(f"-ts {split}") or f"-ts {split} " in command
        assert f"-ub {plan['n_ubatch']}" in command
    assert "GPU 1:" in (tmp_path / "multi-gpu.txt").read_text()


def test_the_ballast_comes_within_its_slack_of_the_target() -> None:
    free, target, steps = 143_000, 24 * 1024, 0
    while size := ballast.next_allocation(free, target):
        free, steps = free - size, steps + 1
    assert target <= free <= target + ballast.SLACK_MIB and steps < 40
    assert ballast.next_allocation(target + 10, target) == 0


def test_the_measuring_child_loads_the_plans_split_and_reports(
    tiny_gguf: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run = multi_gpu.RUNS[1]
    planned = multi_gpu.plan_for(run, multi_gpu.described(run, 24), context=1_024)
    assert len(planned.tensor_split) == 2
    monkeypatch.setattr(multi_gpu, "plan_for", lambda run, context=None: planned)
    monkeypatch.setattr(multi_gpu, "per_card_used_mib", lambda indexes: [500] * len(indexes))
    args = argparse.Namespace(model=tiny_gguf, shape="20b", cards=[0, 1], gpus=None,
                              baseline_mib=[100, 200], context=1_024)  # fmt: skip
    multi_gpu.measure(args)
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert report["placement"] == "2 GPUs" and report["decode_tokens_per_second"] > 0
    assert report["vram_after_load_mib"] == [400, 300] == report["vram_after_fill_mib"]
    assert report["plan"]["tensor_split"] == list(planned.tensor_split)
    bench = [{"test": "tg128", "depth": 0, "tokens_per_second": 200.0, "stddev": 1.0}]
    judged = judge({"run": run.name, **report, "llama_bench": bench})
    assert judged["verdict"].endswith("CHECK")  # 400 MiB measured is far below the estimate
    assert not judged["cards_checked"][0]["within_15_percent"]
    assert judged["decode_vs_llama_bench"] == round(report["decode_tokens_per_second"] / 200, 3)
    text = "\n".join(summary_lines([judged]))
    assert "GPU 0: layers 0-" in text and "NOT within_15_percent" in text and "ratio" in text


def test_a_measurement_within_the_estimate_is_ok() -> None:
    card = {"index": 0, "first_layer": 0, "layers": 24, "output": True,
            "est_vram": 10_000 << 20, "usable": 20_000 << 20}  # fmt: skip
    row = {"run": "r", "plan": {"cards": [card]},
           "vram_after_load_mib": [9_000], "vram_after_fill_mib": [9_500]}  # fmt: skip
    assert judge(row)["verdict"] == "r: ok"
    row["vram_after_fill_mib"] = [10_200]  # above the estimate: not on the safe side
    assert judge(row)["verdict"] == "r: CHECK"
