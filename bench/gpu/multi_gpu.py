"""Several GPUs (issue 29) on a two-GPU machine: plan, load and decode with the planner's split,
each card's VRAM (NVML) against the plan's estimate for that card, and decode speed against
llama-bench with the same split.

For each run, ballast processes (`ballast.py`) hold memory until NVML reports the run's free
memory per card (24 + 12 GiB, 16 + 16 GiB: the enthusiasts' cards, on two large GPUs); then a
fresh process (`measure`) probes the machine, plans as `gptoss-local` would (with `--gpus` where
the run names cards), loads the synthetic model of the shape with the plan's load settings
(cards by PCI bus id, tensor_split, split mode layer, experts of the first N layers in RAM),
reads each card's NVML use after the load and after filling the context, and times decoding.
llama-bench then runs the same split (`-dev CUDAi/CUDAj -sm layer -ts a/b -ncmoe N -ub U`).

    bench/gpu/run.sh OUT multi                       # 20b and 120b (120b in a tmpfs), all runs
    python bench/gpu/multi_gpu.py --bin BUILD/out/bin --out OUT --shapes 20b --dry-run

`--dry-run` plans each run on described cards (no CUDA, no model) and prints the plans and the
llama-bench command lines: the CPU rehearsal CI runs. Writes OUT/multi-gpu.json and
OUT/multi-gpu.txt.

On 141 GiB cards the planner's margin (4 % of the total, 5.6 GiB) is larger than on a 24 GB
card (1 GiB), so each card's usable VRAM is smaller than on the card it stands in for: the
plans are tighter, which is the harder test of the estimate. The model files go to a tmpfs
(`run.sh multi`: the 120b shape is 63 GB).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(Path(__file__).resolve().parent)]

MIB = 1 << 20
GIB = 1 << 30
GENERATE = 64


@dataclass(frozen=True)
class Run:
    """One configuration: the model's shape, MiB free per card (NVML index order) and the
    cards asked for (None: the planner's choice)."""

    shape: str
    free_mib: tuple[int, ...]
    gpus: tuple[int, ...] | None = None

    @property
    def name(self) -> str:
        free = "+".join(f"{m // 1024}" for m in self.free_mib)
        asked = f" --gpus {','.join(map(str, self.gpus))}" if self.gpus else ""
        return f"{self.shape} on {free} GiB free{asked}"


RUNS = (
    Run("20b", (24 * 1024, 12 * 1024), (0, 1)),  # fits the first card: both asked for
    Run("20b", (16 * 1024, 16 * 1024)),
    Run("120b", (24 * 1024, 12 * 1024)),
    Run("120b", (16 * 1024, 16 * 1024)),
)


def plan_for(run: Run, hardware=None, context: int | None = None):  # type: ignore[no-untyped-def]
    """The planner's plan of `run` on `hardware` (default: this machine, through NVML)."""
    from gptoss_local import catalog
    from gptoss_local.hardware.machine import probe
    from gptoss_local.plan.planner import plan
    from gptoss_local.plan.wishes import Wishes

    wishes = Wishes(model=run.shape, gpus=run.gpus, context=context)
    return plan(hardware or probe(), catalog.load(), wishes)


def described(run: Run, total_gib: float):  # type: ignore[no-untyped-def]
    """This run's cards as the planner would see them on a machine of `total_gib` cards."""
    from gptoss_local.hardware.machine import Gpu, Hardware

    total = int(total_gib * GIB)
    gpus = tuple(
        Gpu(i, f"NVIDIA H200 ({free // 1024} GiB free)", "Tesla", "datacenter", total, free * MIB,
            "9.0", 4800.0, f"00000000:{i + 1:02X}:00.0")
        for i, free in enumerate(run.free_mib)
    )  # fmt: skip
    return Hardware(gpus, 256 * GIB, 240 * GIB, 32, 32, "/", 1 << 40)


def llama_bench_command(bin_dir: Path, model: Path, p) -> list[str]:  # type: ignore[no-untyped-def]
    """llama-bench with the plan's cards, split, experts in RAM and micro-batch."""
    import llama_tools

    devices = "/".join(f"CUDA{i}" for i in p.gpu_indices)  # CUDA_DEVICE_ORDER=PCI_BUS_ID
    command = [str(bin_dir / "llama-bench"), "-m", str(model), "-ngl", "99", "-fa", "1",
               "-sm", "layer", "-dev", devices, "-ncmoe", str(p.cpu_moe_layers),
               "-ub", str(p.n_ubatch), "-b", str(p.n_batch),
               "-lm", "none" if p.cpu_moe_layers else "auto",
               "-p", "512", "-n", "128", "-r", "3", "-o", "json"]  # fmt: skip
    if len(p.tensor_split) > 1:
        command += ["-ts", "/".join(map(str, p.tensor_split))]
    if llama_tools.cpu_has_amx():
        command += ["--repack", "0"]
    return command


def per_card_used_mib(indexes: list[int]) -> list[int]:
    """NVML's used memory of each card, MiB."""
    import pynvml

    pynvml.nvmlInit()
    try:
        return [
            int(pynvml.nvmlDeviceGetMemoryInfo(pynvml.nvmlDeviceGetHandleByIndex(i)).used) // MIB
            for i in indexes
        ]
    finally:
        pynvml.nvmlShutdown()


def measure(args: argparse.Namespace) -> None:
    """The child: plan on this machine as it is now, load, fill, decode; one JSON line."""
    from gptoss_local import benchmark
    from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
    from gptoss_local.backends.llamacpp.load import LoadSettings

    run = Run(args.shape, (), tuple(args.gpus) if args.gpus else None)
    p = plan_for(run, context=args.context)
    baseline = dict(zip(args.cards, args.baseline_mib, strict=True))
    report: dict = {"plan": _plan_summary(p)}
    if not p.fits or not p.gpu_indices:
        print(json.dumps({**report, "error": "the plan does not fit on the GPUs"}))
        return
    indexes = list(p.gpu_indices)

    def used() -> list[int]:
        now = per_card_used_mib(indexes)
        return [u - baseline.get(i, 0) for u, i in zip(now, indexes, strict=True)]

    settings = LoadSettings.from_plan(p)
    with LlamaCppBackend(args.model, settings, log_path=args.model.parent / "multi.log") as b:
        report["vram_after_load_mib"] = used()
        fill = benchmark.filler_conversation(b, p.context - GENERATE - 64)
        report["context_used"] = benchmark.run_once(b, fill, GENERATE).context_used
        report["vram_after_fill_mib"] = used()
        short = benchmark.filler_conversation(b, 200)
        speeds = [benchmark.run_once(b, short, GENERATE).decode_tokens_per_second or 0.0
                  for _ in range(3)]  # fmt: skip
        report["decode_tokens_per_second"] = round(sum(speeds[1:]) / 2, 1)
        report["placement"] = b.info().placement
    print(json.dumps(report))


def _plan_summary(p) -> dict:  # type: ignore[no-untyped-def]
    return {
        "fits": p.fits, "gpu_indices": list(p.gpu_indices), "tensor_split": list(p.tensor_split),
        "cpu_moe_layers": p.cpu_moe_layers, "context": p.context, "n_ubatch": p.n_ubatch,
        "cards": [asdict(c) for c in p.cards], "left_out": [asdict(c) for c in p.left_out],
    }  # fmt: skip


from multi_gpu_report import judge, summary_lines  # noqa: E402  (needs sys.path above)


def one_run(run: Run, args: argparse.Namespace, model: Path) -> dict:
    """Ballast to the run's free memory, then our load in a fresh process, then llama-bench."""
    import llama_tools
    from ballast import Ballast

    targets = dict(enumerate(run.free_mib))
    with Ballast(targets) as free:
        cards = sorted(targets)
        baseline = per_card_used_mib(cards)
        command = [sys.executable, __file__, "measure", str(model), "--shape", run.shape,
                   "--cards", *map(str, cards), "--baseline-mib", *map(str, baseline)]  # fmt: skip
        if run.gpus:
            command += ["--gpus", *map(str, run.gpus)]
        if args.context:
            command += ["--context", str(args.context)]
        env = {**os.environ, "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}
        env.pop("CUDA_VISIBLE_DEVICES", None)
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=1800)
        row: dict = {"run": run.name, "free_mib": free}
        if done.returncode != 0:
            return {**row, "error": done.stderr[-3000:]}
        row.update(json.loads(done.stdout.strip().splitlines()[-1]))
        if "error" in row:
            return row
        bench = llama_bench_command(args.bin, model, plan_for(run, context=args.context))
        tried = subprocess.run(bench, capture_output=True, text=True, env=env, timeout=1800)
        if tried.returncode == 0:
            row["llama_bench"] = llama_tools.parse_llama_bench(tried.stdout)
        else:
            row["llama_bench_error"] = tried.stderr[-2000:]
        row["llama_bench_command"] = " ".join(bench)
    return judge(row)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--bin", type=Path, default=Path("/tmp/gptoss-llama/out/bin"))
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--models", type=Path, default=Path("/tmp/gptoss-models"))
    parser.add_argument("--shapes", default="20b,120b", help="which runs' shapes to do")
    parser.add_argument("--context", type=int, help="plan this context instead of the largest")
    parser.add_argument("--dry-run", action="store_true", help="plan on described cards only")
    parser.add_argument("--total-gib", type=float, default=141.0,
                        help="with --dry-run: each card's total memory (H200: 141)")  # fmt: skip
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    shapes = args.shapes.split(",")
    runs = [run for run in RUNS if run.shape in shapes]
    rows = []
    for run in runs:
        if args.dry_run:
            p = plan_for(run, described(run, args.total_gib), args.context)
            model = args.models / f"synthetic-{run.shape}.gguf"
            command = " ".join(llama_bench_command(args.bin, model, p))
            rows.append({"run": run.name, "plan": _plan_summary(p), "llama_bench_command": command})
            continue
        import steps

        model = steps.synthetic_model(run.shape, args.models)
        rows.append(one_run(run, args, model))
        print(rows[-1].get("verdict", rows[-1].get("error", "")), flush=True)
    (args.out / "multi-gpu.json").write_text(json.dumps(rows, indent=2))
    text = "\n".join(summary_lines(rows)) + "\n"
    (args.out / "multi-gpu.txt").write_text(text)
    print(text)


if __name__ == "__main__":
    if sys.argv[1:2] == ["measure"]:
        child = argparse.ArgumentParser()
        child.add_argument("model", type=Path)
        child.add_argument("--shape", required=True)
        child.add_argument("--cards", type=int, nargs="+", required=True)
        child.add_argument("--baseline-mib", type=int, nargs="+", required=True)
        child.add_argument("--gpus", type=int, nargs="+")
        child.add_argument("--context", type=int)
        measure(child.parse_args(sys.argv[2:]))
    else:
        main()
