"""EAGLE-3 drafting on one loaded model, side by side in one process (bench/RESULTS.md):

1. the head's own cost: milliseconds per decode spent in the head (taking the target's
   features, the seed step, each further draft), against one target decode;
2. greedy replies, `--tokens` long, `--repeats` times, decode tokens/s:
   - "plain" (no drafts, sampled on the CPU, the path drafts take) and "gpu" (no drafts,
     sampled in the GPU graph: the engine's default there);
   - "eagle": the random-weight head, every draft refused (its acceptance on random weights
     says nothing): what drafting costs when it does not pay, with the governor that stops
     drafting in a poor stretch ("eagle") and without ("eagle ungoverned"); "... as run": as
     `run` drafts on a GPU, the chain moving into the graph once drafting gives up;
   - "pinned ...": one token made the greedy choice everywhere, and a head (`--pinned-head`)
     whose whole draft vocabulary maps to that token, so its drafts are always right: the
     ceiling at K drafts per decode with the head's and the model's real costs;
3. the same with the experts of every layer in system RAM (`--experts-in-ram N`), where a
   decode of several tokens reads more experts: whether drafts pay there (the plan's rule);
4. derived (not measured): the speed-up on real weights from published acceptance: tokens
   per decode T = 1 + kept drafts, speed-up = T / ((verify(K) + head(K)) / decode).

Run: python bench/eagle.py MODEL.gguf --head HEAD.gguf --pinned-head PINNED.gguf --pin ID
     [--gpu-layers -1] [--tokens 256] [--repeats 3] [--experts-in-ram 24]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "bench")]
PROMPT = "def area(width, height):\n    return width * height\n\n" * 40
# Mean tokens per decode (1 + drafts kept) reported for EAGLE-3 heads at 3-4 drafts: the
# published range for chat and code; the table shows what each would give here.
TOKENS_PER_DECODE = (1.5, 2.0, 2.5, 3.0)


class HeadClock:
    """Wall time spent inside the head's drafting calls (patched around them)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.calls = 0

    def wrap(self, cls: Any, name: str) -> None:
        original = getattr(cls, name)
        clock = self

        def timed(*args: Any, **kwargs: Any) -> Any:
            began = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                clock.seconds += time.perf_counter() - began
                clock.calls += 1

        setattr(cls, name, timed)


class Ungoverned:
    """A governor that always lets the loop draft as many as the drafter may."""

    def __init__(self, most: int, break_even: float) -> None:
        self.most = most
        self.low_yield, self.pauses = False, 0

    def allows(self) -> int:
        return self.most

    def record(self, drafted: int, kept: int) -> None:
        pass


def replies(
    backend: Any, runs: dict[str, tuple], repeats: int, clock: HeadClock, native: HeadClock
) -> dict:
    """Decode tokens/s, tokens per decode and head ms per decode of each named run."""
    from engine_helpers import chat, ran

    from gptoss_local.backends.base import ReplyRequest
    from gptoss_local.backends.llamacpp import token_loop
    from gptoss_local.backends.llamacpp.drafting import DraftGovernor

    found: dict[str, dict[str, list[float]]] = {}
    for _ in range(repeats):
        for name, (settings, options, most, governed) in runs.items():
            if backend._eagle is not None:
                backend._eagle.most = most
            token_loop.DraftGovernor = DraftGovernor if governed else Ungoverned  # type: ignore
            clock.seconds, clock.calls = 0.0, 0
            native.seconds, native.calls = 0.0, 0
            reply = ran(backend.stream(ReplyRequest(chat(PROMPT), settings), options=options))
            stats = reply.stats
            decodes = max(stats.generated_tokens - stats.accepted_tokens, 1)
            keys = ("rate", "per_decode", "head_ms", "call_ms")
            row = found.setdefault(name, {key: [] for key in keys})
            row["rate"].append(stats.decode_tokens_per_second or 0.0)
            row["per_decode"].append(stats.generated_tokens / decodes)
            row["head_ms"].append(1000 * clock.seconds / decodes)
            # llama.cpp's share: one `llama_process` of the head, its average
            row["call_ms"].append(1000 * native.seconds / max(native.calls, 1))
    token_loop.DraftGovernor = DraftGovernor  # type: ignore
    return found


def measure(args: argparse.Namespace, in_ram: int, tokens: int) -> dict[str, Any]:
    """Load the model (experts of `in_ram` layers in RAM) with the pinned head, then the
    random head, and run every reply."""
    from engine_helpers import chat, ran
    from speculative import verify_costs

    from gptoss_local.backends.base import GenerationSettings, ReplyRequest
    from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
    from gptoss_local.backends.llamacpp.eagle_drafting import EagleDrafter
    from gptoss_local.backends.llamacpp.load import LoadSettings
    from gptoss_local.backends.llamacpp.options import LlamaOptions

    clock, native = HeadClock(), HeadClock()
    for name in ("propose", "finish", "observe", "usable_prefix"):
        clock.wrap(EagleDrafter, name)
    native.wrap(EagleDrafter, "_process")
    greedy = GenerationSettings(temperature=0.0, max_tokens=tokens)
    pinned = replace(greedy, logit_bias=((args.pin, 100.0),))
    on_gpu = args.gpu_layers != 0
    cpu, gpu = LlamaOptions(), LlamaOptions(backend_sampling=on_gpu)
    eagle = LlamaOptions(draft="eagle3")
    load = LoadSettings(context=4096, gpu_layers=args.gpu_layers, cpu_moe_layers=in_ram,
                        load_mode="none" if in_ram and on_gpu else "auto")  # fmt: skip
    found: dict[str, Any] = {}
    for head, runs in (
        (args.pinned_head, {
            "pinned plain": (pinned, cpu, 0, True),
            "pinned gpu": (pinned, gpu, 0, True),
            **{f"pinned eagle K={k}": (pinned, eagle, k, True) for k in (1, 2, 3, 4)},
            "pinned ngram K=6": (pinned, LlamaOptions(draft="ngram"), 0, True),
        }),
        (args.head, {
            "plain": (greedy, cpu, 0, True),
            "gpu": (greedy, gpu, 0, True),
            "eagle K=3": (greedy, eagle, 3, True),
            "eagle K=3 ungoverned": (greedy, eagle, 3, False),
            # as `run --draft-model` runs: the chain moves into the graph once drafting gives up
            "eagle K=3 as run": (greedy, replace(eagle, backend_sampling=on_gpu), 3, True),
            "ngram as run": (greedy, LlamaOptions(draft="ngram", backend_sampling=on_gpu), 0, True),
        }),
    ):  # fmt: skip
        backend = LlamaCppBackend(args.model, replace(load, draft_model=str(head)))
        try:
            ran(backend.stream(ReplyRequest(chat(PROMPT), greedy)))  # warm up; cache the prompt
            if "verify_ms" not in found:
                found["verify_ms"] = verify_costs(backend, 8, args.repeats * 10)
            found.update(replies(backend, runs, args.repeats, clock, native))
        finally:
            backend.close()
    return found


def _row(name: str, row: dict[str, list[float]]) -> str:
    rate, per_decode = statistics.mean(row["rate"]), statistics.mean(row["per_decode"])
    return (f"  {name:24s} {rate:8.1f} tok/s  tokens/decode {per_decode:.2f}"
            f"  head {statistics.mean(row['head_ms']):.2f} ms/decode"
            f" ({statistics.mean(row['call_ms']):.2f} ms a llama.cpp call)"
            f"  (runs: {', '.join(f'{r:.1f}' for r in row['rate'])})")  # fmt: skip


def report(title: str, found: dict[str, Any]) -> list[str]:
    costs = found["verify_ms"]
    rates = {
        name: statistics.mean(row["rate"]) for name, row in found.items() if name != "verify_ms"
    }
    lines = [title, "  measured: one target decode of 1 + K tokens (ms, median), against K = 0"]
    lines += [f"    K={k}  {ms:7.2f} ms  x{ms / costs[0]:.2f}" for k, ms in costs.items()]
    lines.append("  measured: greedy replies, decode tokens/s")
    lines += [_row(name, row) for name, row in found.items() if name != "verify_ms"]
    best = max((n for n in rates if n.startswith("pinned eagle")), key=rates.__getitem__)
    lines.append(
        f"  {best} / pinned plain: {rates[best] / rates['pinned plain']:.2f}   "
        f"/ pinned gpu: {rates[best] / rates['pinned gpu']:.2f}   "
        f"eagle K=3 / plain: {rates['eagle K=3'] / rates['plain']:.2f}   "
        f"eagle K=3 ungoverned / plain: {rates['eagle K=3 ungoverned'] / rates['plain']:.2f}   "
        f"eagle K=3 as run / gpu: {rates['eagle K=3 as run'] / rates['gpu']:.2f}   "
        f"ngram as run / gpu: {rates['ngram as run'] / rates['gpu']:.2f}"
    )
    head = statistics.mean(found["eagle K=3 ungoverned"]["head_ms"])
    decode = 1000 / rates["plain"]  # ms per token of a plain CPU-sampled reply
    lines.append(
        "  derived (not measured): speed-up over the GPU-sampled reply at K = 3 for T tokens per "
        "decode: T / ((verify(3) + head) / decode(gpu))"
    )
    gpu_decode = 1000 / rates["gpu"]
    for per_decode in TOKENS_PER_DECODE:
        step = costs[3] / costs[0] * decode + head
        lines.append(f"    T={per_decode:.1f}  x{per_decode * gpu_decode / step:.2f}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path)
    parser.add_argument("--head", type=Path, required=True)
    parser.add_argument("--pinned-head", type=Path, required=True)
    parser.add_argument("--pin", type=int, required=True, help="the token the pinned head drafts")
    parser.add_argument("--gpu-layers", type=int, default=0)
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--experts-in-ram", type=int, default=0, help="also measure with N layers' experts in RAM"
    )
    parser.add_argument("--device", default="")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    results = {"all on the GPU": measure(args, 0, args.tokens)}
    if args.experts_in_ram:
        key = f"experts of {args.experts_in_ram} layers in RAM"
        results[key] = measure(args, args.experts_in_ram, max(args.tokens // 2, 32))
    lines = [
        "EAGLE-3 drafting: the head's cost, the ceiling, and where it pays (bench/eagle.py)",
        f"command: python bench/eagle.py {args.model.name} --head {args.head.name} "
        f"--pinned-head {args.pinned_head.name} --pin {args.pin} --gpu-layers {args.gpu_layers} "
        f"--tokens {args.tokens} --repeats {args.repeats} --experts-in-ram {args.experts_in_ram}",
        f"machine: {args.device or platform.machine()}; {platform.platform()}",
    ]
    for title, found in results.items():
        lines += ["", *report(title, found)]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.out:
        args.out.write_text(text)
        args.out.with_suffix(".json").write_text(json.dumps(results))


if __name__ == "__main__":
    main()
