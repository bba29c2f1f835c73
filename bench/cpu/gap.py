"""Our CPU decode against llama-bench's tg128, one condition at a time (issue 40).

llama-bench's tg128 decodes 128 random tokens at depth 0 in a context of exactly 128 cells and
never samples; ours decodes after a prompt, in the context the loader makes (4,096 tokens here,
as `serve --context 4096`), and samples every token. In interleaved rounds (every runner once a
round, the order reversed every other round, so load from elsewhere falls on all alike),
tokens/s of:
  A  llama-bench tg128                  its defaults (128-cell context, depth 0)
  B  llama-bench tg128 @ depth D        D = our prompt's length, the cells ours decodes after
  B' bare loop, context of D + 128      llama-bench's loop (one `llama_decode` of one token a
                                        step, no sampling) in this process, in a context sized
                                        as llama-bench sizes it, after the same D-token prompt
  C  bare loop, our context             the same on the context our loader made
  D  bare loop + our sampler            C, each step followed by one draw of the sampler ours
                                        builds (end tokens banned; `quick_draw`)
  E  ours                               `LlamaCppBackend.stream` of 129 tokens (128 steps)
  D' D at temperature 1 with llama.cpp's own `llama_sampler_sample` in place of our quick draw
for greedy and gpt-oss's default sampling (temperature 1, top-p 1); then the sampler alone
(µs a draw on one decode's logits, ours and llama.cpp's `llama_sampler_sample`). The steps
between them say what each condition costs:
B÷A the depth, B'÷B our process against llama-bench's, C÷B' our larger context, D÷C sampling,
E÷D our Python loop. Every runner uses the same thread count (the loader's choice unless
--threads), flash attention on, f16 cache, no sliding-window cells kept beyond the window.

Run: python bench/cpu/gap.py --bin BIN_DIR MODEL.gguf [--rounds 11] [--out FILE.txt]
     python bench/cpu/gap.py --report FILE.json --bin ANY   (the report of a saved run again)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "bench" / "gpu")]

from gap_runners import Bare, sampler_microseconds, sized_context  # noqa: E402
from tools import llama_bench  # noqa: E402

from gptoss_local.backends.llamacpp.backend import LlamaCppBackend  # noqa: E402
from gptoss_local.backends.llamacpp.load import LoadSettings, default_threads  # noqa: E402
from gptoss_local.benchmark import filler_conversation, run_once  # noqa: E402

MODES = ("greedy", "default")


def rounds(args: argparse.Namespace, threads: int) -> tuple[dict[str, list[float]], dict]:
    """Every runner once a round, `args.rounds` rounds; t/s per runner, and the sampler's µs."""
    settings = LoadSettings(context=args.context, gpu_layers=0, threads=threads)
    with LlamaCppBackend(args.model, settings, log_path=Path(os.devnull)) as backend:
        short = filler_conversation(backend, 0)
        bare = Bare(backend, short)
        depth = len(bare.prompt)
        cells = depth + args.tokens
        sized = Bare(backend, short, sized_context(backend, cells))
        runners = {
            "A llama-bench tg128": lambda: _bench(args, threads, 0),
            f"B llama-bench tg128 @ d{depth}": lambda: _bench(args, threads, depth),
            f"B' bare loop, {cells}-cell context": lambda: sized.run(args.tokens, None),
            "C bare loop, our context": lambda: bare.run(args.tokens, None),
        }
        for mode in MODES:
            runners[f"D bare + sampler, {mode}"] = lambda m=mode: bare.run(args.tokens, m)
            runners[f"E ours, {mode}"] = lambda m=mode: _ours(backend, short, args.tokens, m)
        runners["D' bare + llama.cpp's draw, default"] = lambda: bare.run(
            args.tokens, "default", True
        )
        for run in runners.values():
            run()  # warm-up
        rates: dict[str, list[float]] = {name: [] for name in runners}
        cpu: dict[str, list[float]] = {name: [] for name in runners}
        for index in range(args.rounds):
            order = list(runners) if index % 2 == 0 else list(reversed(runners))
            for name in order:
                wall, on_cpu = runners[name]()
                rates[name].append(wall)
                cpu[name].append(on_cpu)
            print(f"round {index + 1}: " + ", ".join(f"{rates[n][-1]:.0f}" for n in runners)
                  + " (CPU time: " + ", ".join(f"{cpu[n][-1]:.0f}" for n in runners) + ")",
                  flush=True)  # fmt: skip
        sized.free()
        samplers = {mode: sampler_microseconds(bare, mode) for mode in MODES}
        samplers |= {f"{m} native": sampler_microseconds(bare, m, True) for m in MODES}
    return rates, {"depth": depth, "context": args.context, "sampler_us": samplers, "cpu": cpu}


def _bench(args: argparse.Namespace, threads: int, depth: int) -> tuple[float, float]:
    """llama-bench's tg128 t/s by its clock, and by CPU time: the CPU time of a run of three
    repetitions less that of a run of one (the load and the warm-up cancel), over two."""
    spent = []
    for repeats in (1, 3):
        before = _children_cpu()
        wall = llama_bench(args.bin, args.model, threads, repeats, ("tg",), depth)["tg128"]
        spent.append(_children_cpu() - before)
    return wall, 2 * 128 / max(spent[1] - spent[0], 1e-9)


def _ours(backend: LlamaCppBackend, conversation, tokens: int, mode: str) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """Our decode t/s by the reply's clock, and by this process's CPU time (a reply of
    `tokens + 1` less one of one token: the prompt's evaluation cancels)."""
    spent = []
    for generate in (1, tokens + 1):
        before = time.process_time()
        stats = run_once(backend, conversation, generate, mode)
        spent.append(time.process_time() - before)
    return stats.decode_tokens_per_second or 0.0, tokens / max(spent[1] - spent[0], 1e-9)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def report(rates: dict[str, list[float]], extra: dict) -> list[str]:
    """Medians and best of each runner, and the steps between them."""
    median = {name: statistics.median(values) for name, values in rates.items()}
    best = {name: max(values) for name, values in rates.items()}
    names = list(rates)
    a, b, sized, c = names[0], names[1], names[2], names[3]
    lines = [
        f"{'runner':34} {'median':>8} {'best':>8}  ÷A med  ÷B med   (t/s, {len(rates[a])} rounds)"
    ]
    for name in names:
        m = median[name]
        lines.append(f"{name:34} {m:8.1f} {best[name]:8.1f}  "
                     f"{m / median[a]:6.3f}  {m / median[b]:6.3f}")  # fmt: skip
    lines.append("steps (medians): "
                 f"B÷A depth {median[b] / median[a]:.3f}; "
                 f"B'÷B our process, llama-bench's context {median[sized] / median[b]:.3f}; "
                 f"C÷B' our {extra['context']}-cell context "
                 f"{median[c] / median[sized]:.3f}")  # fmt: skip
    for mode in MODES:
        d, e = f"D bare + sampler, {mode}", f"E ours, {mode}"
        per_token = 1e6 / median[d] - 1e6 / median[c]
        lines.append(f"  {mode}: D÷C sampling {median[d] / median[c]:.3f} ({per_token:+.0f} µs a "
                     f"token), E÷D our Python loop {median[e] / median[d]:.3f}; sampler alone "
                     f"{extra['sampler_us'][mode]:.1f} µs a draw (llama.cpp's own "
                     f"{extra['sampler_us'][mode + ' native']:.1f})")  # fmt: skip
    native, quick = names[-1], median["D bare + sampler, default"]
    lines.append(f"  default, llama.cpp's draw: D'÷C {median[native] / median[c]:.3f}; "
                 f"our quick draw ÷ it (D÷D') {quick / median[native]:.3f}")  # fmt: skip
    # Each round's ratio to B, then their median: load that slows one round slows both sides.
    paired = {name: statistics.median(x / y for x, y in zip(rates[name], rates[b], strict=True))
              for name in names if name != b}  # fmt: skip
    lines.append("paired (the median of each round's ratio to B): "
                 + ", ".join(f"{name.split(' ')[0]}{_mode(name)} {ratio:.3f}"
                             for name, ratio in paired.items()))  # fmt: skip
    return lines


def _mode(name: str) -> str:
    """A runner's sampling mode as a suffix (" greedy"), if it has one."""
    return f" {name.rsplit(', ', 1)[1]}" if ", " in name and name[0] in "DE" else ""


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("model", type=Path)
    parser.add_argument("--bin", type=Path, required=True, help="the folder of llama-bench")
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--context", type=int, default=4096)
    parser.add_argument("--threads", type=int, default=0, help="0: the loader's choice")
    parser.add_argument("--out", type=Path, help="also write the report here (and .json beside)")
    parser.add_argument(
        "--report", action="store_true", help="print the report of MODEL, a saved .json, again"
    )
    args = parser.parse_args()
    if args.report:
        raw = json.loads(args.model.read_text())
        print("\n".join(["by the clock (wall time):", *report(raw["rates"], raw),
                         "by CPU time:", *report(raw["cpu"], raw)]))  # fmt: skip
        return
    threads = args.threads or default_threads()
    head = [
        "command: python bench/cpu/gap.py " + " ".join(sys.argv[1:]),
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs, {threads} threads everywhere; "
        f"{platform.platform()}; model {args.model.name} "
        f"({args.model.stat().st_size / 1e6:.0f} MB), context {args.context}",
        f"load before (1, 5, 15 min): {_load()}; started {_now()}",
    ]
    print("\n".join(head), flush=True)
    rates, extra = rounds(args, threads)
    lines = [*head, "by the clock (wall time):", *report(rates, extra),
             "by CPU time (immune to waiting for a CPU; at one thread the fairer view):",
             *report(extra["cpu"], extra),
             f"load after (1, 5, 15 min): {_load()}; ended {_now()}"]  # fmt: skip
    print("\n".join(lines[len(head) :]))
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")
        raw = {"rates": rates, **extra}
        args.out.with_suffix(".json").write_text(json.dumps(raw, indent=1) + "\n")


def _load() -> str:
    return ", ".join(f"{value:.2f}" for value in os.getloadavg())


def _now() -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())


if __name__ == "__main__":
    main()
