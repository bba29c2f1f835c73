"""Experts in RAM, side by side: llama-bench and our engine on the same synthetic model, for each
count of layers whose experts stay in system RAM, load mode (mapped file, or read into pinned
host buffers) and micro-batch. Prefill of a 4,096-token prompt and decode of 64 tokens.

Run (on the CUDA machine, after `bench/gpu/run.sh OUT build`):
  python bench/gpu/experts_in_ram.py MODEL --bin BUILD/out/bin --out OUT [--layers 8,24]
Writes OUT/experts-in-ram.json and OUT/experts-in-ram.txt (a table, with ours / llama-bench).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE)]

from llama_tools import cpu_has_amx  # noqa: E402
from offload_probe import used_vram_mib  # noqa: E402

PROMPT, GENERATE = 4096, 64


def reference(bin_dir: Path, model: Path, layers: int, ubatches: str, modes: str) -> list[dict]:
    """llama-bench rows for every micro-batch and load mode at `layers` layers of experts in RAM."""
    command = [str(bin_dir / "llama-bench"), "-m", str(model), "-ngl", "99", "-fa", "1",
               "-ncmoe", str(layers), "-p", str(PROMPT), "-n", str(GENERATE), "-r", "2",
               "-ub", ubatches, "-b", "4096", "-lm", modes, "-o", "json",
               *(("--repack", "0") if cpu_has_amx() else ())]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=1200)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-3000:])
    rows = []
    for row in json.loads(done.stdout):
        rows.append({"runner": "llama-bench", "layers": layers, "ubatch": row["n_ubatch"],
                     "load_mode": row.get("load_mode", "?"),
                     "test": "prefill" if row["n_gen"] == 0 else "decode",
                     "tokens_per_second": round(row["avg_ts"], 1)})  # fmt: skip
    return rows


def ours(model: Path, layers: int, ubatch: int, mode: str) -> list[dict]:
    """Our engine in a fresh process (offload_probe.py) for one configuration."""
    command = [sys.executable, str(HERE / "offload_probe.py"), str(model), "--cpu-moe", str(layers),
               "--context", "5120", "--ubatch", str(ubatch), "--load-mode", mode,
               "--prefill", str(PROMPT), "--generate", str(GENERATE),
               "--baseline-mib", str(used_vram_mib(0.0) or 0)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=1200)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-3000:])
    probe = json.loads(done.stdout.strip().splitlines()[-1])
    base = {"runner": "ours", "layers": layers, "ubatch": ubatch, "load_mode": mode,
            "vram_mib": probe.get("vram_after_fill_mib")}  # fmt: skip
    return [
        {**base, "test": "prefill", "tokens_per_second": probe["prefill_tokens_per_second"]},
        {**base, "test": "decode", "tokens_per_second": probe["decode_tokens_per_second"]},
    ]


def table(rows: list[dict]) -> str:
    """One line per runner and configuration, with ours / llama-bench at the same settings."""
    key = lambda r: (r["layers"], r["ubatch"], r["load_mode"], r["test"])  # noqa: E731
    best = {key(r): r["tokens_per_second"] for r in rows if r["runner"] == "llama-bench"}
    lines = ["layers  ubatch  load   test     runner       t/s      vs llama-bench  VRAM MiB"]
    for r in sorted(rows, key=lambda r: (*key(r), r["runner"])):
        ref = best.get(key(r))
        ratio = f"{r['tokens_per_second'] / ref:.2f}" if ref and r["runner"] == "ours" else ""
        lines.append(f"{r['layers']:>6}  {r['ubatch']:>6}  {r['load_mode']:<5}  {r['test']:<7}  "
                     f"{r['runner']:<11}  {r['tokens_per_second']:>7}  {ratio:>14}  "
                     f"{r.get('vram_mib') or ''}")  # fmt: skip
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
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    found = args.out / "experts-in-ram.json"
    rows: list[dict] = json.loads(found.read_text()) if found.exists() else []
    for layers in (int(n) for n in args.layers.split(",")):
        if args.only != "ours":
            rows += reference(args.bin, args.model, layers, args.ubatches, args.modes)
        if args.only != "llama-bench":
            for ubatch in (int(u) for u in args.ubatches.split(",")):
                for mode in args.modes.split(","):
                    rows += ours(args.model, layers, ubatch, mode)
        found.write_text(json.dumps(rows, indent=1))  # after each count: a cut-off run keeps it
    (args.out / "experts-in-ram.txt").write_text(table(rows) + "\n")
    print(table(rows))


if __name__ == "__main__":
    main()
