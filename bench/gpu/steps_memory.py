"""Memory steps of run_all.py: expert offload on a real GPU, and the planner's estimates
against what NVML measured."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from gptoss_local import catalog
from gptoss_local.plan import memory
from gptoss_local.units import MIB

PROBE = Path(__file__).with_name("offload_probe.py")


def baseline_vram_mib() -> float:
    """Device-wide NVML used memory before our process creates a CUDA context (0 without NVML)."""
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception:
        return 0.0
    try:
        return pynvml.nvmlDeviceGetMemoryInfo(pynvml.nvmlDeviceGetHandleByIndex(0)).used / MIB
    finally:
        pynvml.nvmlShutdown()


def probe(
    model: Path,
    cpu_moe: int,
    context: int,
    threads: int | None = None,
    ubatch: int = 512,
    load_mode: str = "auto",
) -> dict:
    """Load once in a fresh process and return its report."""
    command = [sys.executable, str(PROBE), str(model), "--cpu-moe", str(cpu_moe),
               "--context", str(context), "--ubatch", str(ubatch), "--load-mode", load_mode,
               "--baseline-mib", str(baseline_vram_mib())]  # fmt: skip
    if threads:
        command += ["--threads", str(threads)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        return {"cpu_moe_layers": cpu_moe, "error": done.stderr[-2000:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def planned(shape: str, budget_gib: float, context: int):  # type: ignore[no-untyped-def]
    """The planner's load settings for a card with `budget_gib` free."""
    from gptoss_local.backends.llamacpp.load import LoadSettings
    from gptoss_local.hardware.machine import Gpu, Hardware
    from gptoss_local.plan.planner import plan
    from gptoss_local.plan.wishes import Wishes

    size = int(budget_gib * (1 << 30))
    card = Gpu(0, f"{budget_gib:g} GiB budget", "NVIDIA", "geforce", size, size)
    machine = Hardware((card,), 512 << 30, 480 << 30, 16, 16, "/", 1 << 40)
    return LoadSettings.from_plan(
        plan(machine, catalog.load(), Wishes(model=shape, context=context))
    )


def offload(run, args: argparse.Namespace) -> tuple[object, list[str]]:  # type: ignore[no-untyped-def]
    if args.budgets:
        budgets = [float(b) for b in args.budgets.split(",")]
        plans = [planned(args.shape, b, args.offload_context) for b in budgets]
        rows = [
            probe(run.model, p.cpu_moe_layers, p.context, ubatch=p.n_ubatch, load_mode=p.load_mode)
            for p in plans
        ]
    else:
        budgets = []
        layers = [int(n) for n in args.offload.split(",")]
        rows = [probe(run.model, n, args.offload_context) for n in layers]
    for row, budget in zip(rows, budgets, strict=False):
        row["budget_gib"] = budget
    heads = ("VRAM load MiB", "VRAM full MiB")
    table = [
        f"{'experts in RAM':>14} {'ubatch':>6} {heads[0]:>14} {heads[1]:>14} {'RSS GiB':>8} "
        f"{'decode t/s':>11}"
    ]
    for r in rows:
        if "error" in r:
            last = r["error"].splitlines()[-1] if r["error"] else "?"
            table.append(f"{r['cpu_moe_layers']:14} failed: {last}")
            continue
        load, full = (str(r[k]) for k in ("vram_after_load_mib", "vram_after_fill_mib"))
        table.append(
            f"{r['cpu_moe_layers']:14} {r.get('ubatch', 512):6} {load:>14} {full:>14} "
            f"{r['rss_gib']:8.2f} "
            f"{r['decode_tokens_per_second']:11.1f}"
        )
    return rows, table


def planner(run, args: argparse.Namespace) -> tuple[object, list[str]]:  # type: ignore[no-untyped-def]
    """The estimate for each measured configuration: within 10 % and not below the measurement."""
    measured = json.loads((run.out / "offload.json").read_text())
    spec = catalog.load().model(args.shape if args.shape in ("20b", "120b") else "20b")
    rows = []
    for r in measured:
        if "error" in r or r.get("vram_after_load_mib") is None:
            continue
        ubatch = r.get("ubatch", 512)
        placement = memory.Placement(1, r["cpu_moe_layers"], r["context"], n_ubatch=ubatch)
        estimate = memory.estimate(spec, placement).vram / MIB
        worst = max(r["vram_after_load_mib"], r["vram_after_fill_mib"])
        rows.append({**r, "estimate_mib": round(estimate), "ratio": round(estimate / worst, 3),
                     "ok": worst <= estimate <= worst * 1.10})  # fmt: skip
    table = [
        f"{'experts in RAM':>14} {'ubatch':>6} {'estimate MiB':>13} {'measured MiB':>13} "
        f"{'ratio':>6} ok"
    ]
    for r in rows:
        worst = max(r["vram_after_load_mib"], r["vram_after_fill_mib"])
        budget = ""
        if "budget_gib" in r:
            inside = worst <= r["budget_gib"] * 1024
            budget = f"; budget {r['budget_gib']:g} GiB {'kept' if inside else 'EXCEEDED'}"
        verdict = "yes" if r["ok"] else "NO"
        table.append(
            f"{r['cpu_moe_layers']:14} {r.get('ubatch', 512):6} {r['estimate_mib']:13} "
            f"{worst:13} {r['ratio']:6.3f} "
            f"{verdict}{budget}"
        )
    return rows, table
