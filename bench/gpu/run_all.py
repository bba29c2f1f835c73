"""The GPU measurements, in one go, on one machine: llama.cpp's own runners beside ours on the
same synthetic gpt-oss file, then prefix reuse, expert offload and the planner's estimates.

Run bench/gpu/run.sh (it builds llama.cpp first); or, with a build at hand:
  python bench/gpu/run_all.py --bin BUILD/out/bin --models /tmp/models --out results/ --shape 20b
Each step writes OUT/<step>.json; summary.txt collects the tables.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))  # tests/synthetic
sys.path.insert(0, str(Path(__file__).resolve().parent))

import steps

STEPS = ("llama_bench", "server", "ours", "ttft", "offload", "planner")


def machine_line() -> str:
    try:
        import pynvml

        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        gpu = f"{pynvml.nvmlDeviceGetName(handle)}, driver {pynvml.nvmlSystemGetDriverVersion()}"
        pynvml.nvmlShutdown()
    except Exception as exc:  # no GPU: a CPU rehearsal of the script
        gpu = f"no GPU ({type(exc).__name__})"
    return (
        f"{gpu}; {os.cpu_count()} CPUs; {platform.platform()}; Python {platform.python_version()}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--bin", type=Path, required=True, help="llama.cpp build's bin folder")
    parser.add_argument("--models", type=Path, default=Path("/tmp/gptoss-models"))
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--shape", default="20b", help="synthetic preset: 20b, 120b, small, tiny")
    parser.add_argument("--steps", nargs="+", default=list(STEPS), choices=STEPS)
    parser.add_argument("--offload", default="0,8,16,24", help="layers with experts in RAM")
    parser.add_argument("--budgets", help="GiB of VRAM, e.g. 24,32: offload as the plan for each")
    parser.add_argument("--offload-context", type=int, default=4096,
                        help="context size of the offload and planner runs")  # fmt: skip
    parser.add_argument("--depths", default="0,8192,32768")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-backend-sampling", dest="backend_sampling", action="store_false",
                        help="skip our runs that sample inside the graph")  # fmt: skip
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    run = steps.Run(
        args.bin, steps.synthetic_model(args.shape, args.models), args.out, args.repeats
    )
    summary = [
        f"command: {' '.join(sys.argv)}",
        f"machine: {machine_line()}",
        f"commit: {os.environ.get('GPTOSS_COMMIT', 'unknown')}; model: synthetic {args.shape} "
        f"({run.model.stat().st_size / 1e9:.2f} GB)",
    ]
    for name in args.steps:
        started = time.perf_counter()
        result, table = getattr(steps, name)(run, args)
        (args.out / f"{name}.json").write_text(json.dumps(result, indent=2))
        summary += ["", f"## {name} ({time.perf_counter() - started:.0f} s)", *table]
        (args.out / "summary.txt").write_text("\n".join(summary) + "\n")
        print("\n".join(summary[-len(table) - 2 :]), flush=True)


if __name__ == "__main__":
    main()
