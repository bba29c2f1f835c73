"""Experts in RAM, side by side: llama-bench and our engine on the same synthetic model, for each
count of layers whose experts stay in system RAM, load mode (mapped file, or read into pinned
host buffers) and micro-batch. Prefill of a 4,096-token prompt and decode of 64 tokens.

Both runners take one warm-up run and report the mean of two timed ones. `--threads 4,8,16`
repeats every row at each CPU thread count (default: each runner's own choice); `--biases
ram,gpu` repeats ours with the biases of RAM-kept experts in RAM (as llama.cpp's --cpu-moe
pattern does) and on the GPU.

Run (on the CUDA machine, after `bench/gpu/run.sh OUT build`):
  python bench/gpu/experts_in_ram.py MODEL --bin BUILD/out/bin --out OUT [--layers 8,24]
Writes OUT/experts-in-ram.json and OUT/experts-in-ram.txt (a table, with ours / llama-bench).
"""

from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE)]

from llama_tools import cpu_has_amx  # noqa: E402
from offload_probe import used_vram_mib  # noqa: E402

PROMPT, GENERATE = 4096, 64


def reference(
    bin_dir: Path, model: Path, layers: int, ubatches: str, modes: str, threads: str
) -> list[dict]:
    """llama-bench rows for every micro-batch, load mode and thread count at `layers` layers of
    experts in RAM."""
    command = [str(bin_dir / "llama-bench"), "-m", str(model), "-ngl", "99", "-fa", "1",
               "-ncmoe", str(layers), "-p", str(PROMPT), "-n", str(GENERATE), "-r", "2",
               "-ub", ubatches, "-b", "4096", "-lm", modes, "-o", "json",
               *(("-t", threads) if threads else ()),
               *(("--repack", "0") if cpu_has_amx() else ())]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=1200)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-3000:])
    rows = []
    for row in json.loads(done.stdout):
        rows.append({"runner": "llama-bench", "layers": layers, "ubatch": row["n_ubatch"],
                     "load_mode": row.get("load_mode", "?"), "threads": row.get("n_threads"),
                     "expert_bias": "ram",
                     "test": "prefill" if row["n_gen"] == 0 else "decode",
                     "tokens_per_second": round(row["avg_ts"], 1)})  # fmt: skip
    return rows


def ours(
    model: Path, layers: int, ubatch: int, mode: str, threads: int | None, bias: str
) -> list[dict]:
    """Our engine in a fresh process (offload_probe.py) for one configuration."""
    command = [sys.executable, str(HERE / "offload_probe.py"), str(model), "--cpu-moe", str(layers),
               "--context", "5120", "--ubatch", str(ubatch), "--load-mode", mode,
               "--prefill", str(PROMPT), "--generate", str(GENERATE), "--expert-bias", bias,
               *(("--threads", str(threads)) if threads else ()),
               "--baseline-mib", str(used_vram_mib(0.0) or 0)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=1200)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-3000:])
    probe = json.loads(done.stdout.strip().splitlines()[-1])
    base = {"runner": "ours", "layers": layers, "ubatch": ubatch, "load_mode": mode,
            "threads": probe.get("threads"), "expert_bias": bias,
            "vram_mib": probe.get("vram_after_fill_mib")}  # fmt: skip
    return [
        {
            **base,
            "test": "prefill",
            "tokens_per_second": probe["prefill_tokens_per_second"],
            "first_run_tokens_per_second": probe.get("prefill_first_tokens_per_second"),
        },
        {**base, "test": "decode", "tokens_per_second": probe["decode_tokens_per_second"]},
    ]


def table(rows: list[dict]) -> str:
    """One line per runner and configuration, with ours / llama-bench at the same settings."""

    def key(r: dict) -> tuple:
        return (r["layers"], r["ubatch"], r["load_mode"], int(r.get("threads") or 0), r["test"])

    best = {key(r): r["tokens_per_second"] for r in rows if r["runner"] == "llama-bench"}
    lines = ["layers  ubatch  load   threads  test     runner       bias  t/s      vs llama-bench  "
             "VRAM MiB  first run t/s"]  # fmt: skip
    for r in sorted(rows, key=lambda r: (*key(r), r["runner"], r.get("expert_bias", "ram"))):
        ref = best.get(key(r))
        ratio = f"{r['tokens_per_second'] / ref:.2f}" if ref and r["runner"] == "ours" else ""
        lines.append(f"{r['layers']:>6}  {r['ubatch']:>6}  {r['load_mode']:<5}  "
                     f"{r.get('threads') or '':>7}  {r['test']:<7}  {r['runner']:<11}  "
                     f"{r.get('expert_bias', 'ram'):<4}  {r['tokens_per_second']:>7}  {ratio:>14}  "
                     f"{r.get('vram_mib') or '':>8}  "
                     f"{r.get('first_run_tokens_per_second') or ''}")  # fmt: skip
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("model", type=Path)
    parser.add_argument("--bin", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--layers", default="8,24")
    parser.add_argument("--ubatches", default="512,2048,4096")
    parser.add_argument("--modes", default="none,mmap")
    parser.add_argument("--only", choices=["ours", "llama-bench"], help="one runner only")
    parser.add_argument("--threads", default="", help="CPU thread counts, e.g. 4,8,16")
    parser.add_argument("--biases", default="ram", help="ram, gpu or ram,gpu (ours only)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    found = args.out / "experts-in-ram.json"
    rows: list[dict] = json.loads(found.read_text()) if found.exists() else []
    for layers in (int(n) for n in args.layers.split(",")):
        if args.only != "ours":
            rows += reference(args.bin, args.model, layers, args.ubatches, args.modes, args.threads)
        if args.only != "llama-bench":
            counts = [int(t) for t in args.threads.split(",") if t] or [None]
            for ubatch, mode, threads, bias in itertools.product(
                (int(u) for u in args.ubatches.split(",")), args.modes.split(","), counts,
                args.biases.split(","),
            ):  # fmt: skip
                rows += ours(args.model, layers, ubatch, mode, threads, bias)
        found.write_text(json.dumps(rows, indent=1))  # after each count: a cut-off run keeps it
    (args.out / "experts-in-ram.txt").write_text(table(rows) + "\n")
    print(table(rows))


if __name__ == "__main__":
    main()
