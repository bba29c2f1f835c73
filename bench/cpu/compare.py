"""gptoss-local on the CPU beside llama.cpp's own tools of the same build, on random-weight gpt-oss
files (issue 40).

For each shape (`small`: 63 MB, 16k-token vocabulary; `medium`: 585 MB, gpt-oss's 201k-token
vocabulary), in turn, with the same thread count everywhere (`--cpus N`: N, the servers pinned
to the first N CPUs; else the loader's choice, which llama-bench's default equals):
- llama-bench pp512 and tg128 (which never samples, at depth 0 in a 128-cell context), and
  tg128 at the depth of our shortest prompt (`-d D`: the cells ours decodes after);
- our decode of 128 tokens after the shortest prompt, greedy and gpt-oss's default sampling
  (temperature 1, top-p 1: the full distribution), with the sampler chain after llama.cpp's
  graph (what a CPU-only load does) and inside it (`LlamaOptions.backend_sampling`, what a
  GPU load does); our prefill of an exactly 512-token prompt (rendering and tokenizing
  included); all in rounds, llama-bench and ours in turn;
- `gptoss-local serve` (the real command) against `llama-server`, both up at once, each
  request sent to one then the other (the order swapped every round), every reply exactly N
  tokens (end tokens banned by logit_bias in ours, `ignore_eos` in llama-server): a few
  one-turn chats and one chat of `--turns` turns, each turn's history the earlier questions and
  fixed answers. llama-server gets our rendered Harmony prompt on its raw /completion: with
  random weights the model writes no Harmony header, which its gpt-oss parser
  (/v1/chat/completions with --jinja) fails on. The prompt token counts of both servers are
  printed side by side, to show they evaluate the same text.
Ratios are ours ÷ theirs (tokens/s) or ours ÷ theirs (wall seconds, lower is better).
bench/cpu/gap.py takes the decode gap apart one condition at a time.

Run: bench/cpu/run.sh OUT [--shapes small medium] [--repeats 5] [--turns 20] [--cpus N]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "bench" / "gpu")]

from serving import compare_servers  # noqa: E402
from synthetic import SMALL, write_gguf  # noqa: E402
from tools import llama_bench  # noqa: E402

from gptoss_local.backends.llamacpp.backend import LlamaCppBackend  # noqa: E402
from gptoss_local.backends.llamacpp.load import LoadSettings, default_threads  # noqa: E402
from gptoss_local.benchmark import filler_conversation, run_once  # noqa: E402

MEDIUM = dataclasses.replace(
    SMALL, name="medium", layers=8, hidden=768, heads=12, kv_heads=4, head_dim=64, experts=32,
    expert_ff=768, vocab_size=201_088, special_base=199_998,
)  # fmt: skip
SHAPES = {"small": SMALL, "medium": MEDIUM}


def model_file(name: str, folder: Path) -> Path:
    """The shape's random-weight GGUF, written once into `folder`."""
    path = folder / f"gptoss-{name}.gguf"
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        part = path.with_suffix(".part")
        write_gguf(part, SHAPES[name], seed=0)
        part.rename(path)
    return path


def engine_rounds(bin_dir: Path, model: Path, threads: int, repeats: int) -> dict[str, list[float]]:
    """`repeats` rounds, each llama-bench (pp512, tg128) then our runs, so that load from
    elsewhere on the machine falls on both alike: t/s per runner, one value a round."""
    settings = LoadSettings(context=4096, gpu_layers=0, threads=threads)
    runs = {f"decode {mode} {where}": (mode, where == "in graph")
            for mode in ("greedy", "default") for where in ("chain", "in graph")}  # fmt: skip
    rates: dict[str, list[float]] = {}
    with LlamaCppBackend(model, settings, log_path=Path(os.devnull)) as backend:
        short, long = filler_conversation(backend, 0), filler_conversation(backend, 512)
        depth = run_once(backend, short, 1).prompt_tokens
        for mode, graph in runs.values():
            run_once(backend, short, 16, mode, graph)  # warm-up
        for _ in range(repeats):
            for test, value in llama_bench(bin_dir, model, threads, 1).items():
                rates.setdefault(f"llama-bench {test}", []).append(value)
            at_depth = llama_bench(bin_dir, model, threads, 1, ("tg",), depth)["tg128"]
            rates.setdefault(f"llama-bench tg128 @ d{depth}", []).append(at_depth)
            for name, (mode, graph) in runs.items():
                stats = run_once(backend, short, 129, mode, graph)  # 128 steps between tokens
                rates.setdefault(name, []).append(stats.decode_tokens_per_second or 0.0)
            stats = run_once(backend, long, 1, "default", True)  # the chain kept: no re-reserve
            prefill = stats.evaluated_tokens / stats.prefill_seconds
            rates.setdefault("prefill 512", []).append(prefill)
    return rates


def engine_lines(name: str, rates: dict[str, list[float]]) -> list[str]:
    """Medians, and ours ÷ llama-bench (tg128 for decode, pp512 for prefill)."""
    median = {key: statistics.median(values) for key, values in rates.items()}
    tg, pp = median["llama-bench tg128"], median["llama-bench pp512"]
    deep = next(key for key in median if key.startswith("llama-bench tg128 @"))
    lines = [f"{name}: llama-bench tg128 {tg:.1f} t/s, {deep[12:]} (after as many tokens as "
             f"our prompt) {median[deep]:.1f} t/s, pp512 {pp:.1f} t/s (medians of "
             f"{len(rates['prefill 512'])} rounds)"]  # fmt: skip
    for key, value in median.items():
        if key.startswith("decode"):
            lines.append(f"  ours {key:24} {value:8.1f} t/s   ÷ tg128 {value / tg:5.2f}, "
                         f"÷ {deep[12:]} {value / median[deep]:5.2f}")  # fmt: skip
        elif key == "prefill 512":
            lines.append(f"  ours {key:24} {value:8.1f} t/s   ÷ pp512 {value / pp:5.2f}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--bin", type=Path, required=True, help="llama-bench, llama-server")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--models", type=Path, required=True, help="where the GGUFs are kept")
    parser.add_argument("--shapes", nargs="+", default=["small", "medium"], choices=SHAPES)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--tokens", type=int, default=64, help="per served reply")
    parser.add_argument("--steps", nargs="+", default=["engine", "serve"])
    parser.add_argument("--cpus", type=int, default=0,
                        help="use this many threads (servers: pinned to as many CPUs)")  # fmt: skip
    args = parser.parse_args()
    threads = args.cpus or default_threads()
    args.out.mkdir(parents=True, exist_ok=True)
    lines = [
        "command: bench/cpu/run.sh OUT " + " ".join(sys.argv[1:]),
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs ({threads} threads used); "
        f"{platform.processor() or platform.platform()}; Python {platform.python_version()}; "
        f"llama.cpp of llama-cpp-python {_version()}; load (1, 5, 15 min) {os.getloadavg()}",
    ]
    raw: dict[str, object] = {}
    for name in args.shapes:
        model = model_file(name, args.models)
        size = model.stat().st_size / 1e6
        if "engine" in args.steps:
            rates = engine_rounds(args.bin, model, threads, args.repeats)
            lines += engine_lines(f"{name} ({size:.0f} MB)", rates)
            raw[f"{name} engine"] = rates
        if "serve" in args.steps:
            served = compare_servers(args.bin, model, SHAPES[name], threads, args, name)
            lines += served.pop("lines")  # type: ignore[arg-type]
            raw[f"{name} serve"] = served
        print("\n".join(lines), flush=True)
    ended = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    lines.append(f"load after (1, 5, 15 min) {os.getloadavg()}; ended {ended}")
    (args.out / "cpu-vs-llamacpp.txt").write_text("\n".join(lines) + "\n")
    (args.out / "cpu-vs-llamacpp.json").write_text(json.dumps(raw, indent=1) + "\n")
    print(lines[-1])


def _version() -> str:
    import importlib.metadata

    return importlib.metadata.version("llama_cpp_python")


if __name__ == "__main__":
    main()
