"""What speculative decoding can win on this machine (bench/RESULTS.md), side by side in one
process on one loaded model:

1. verify: the time of one decode of 1 + K tokens (the sampled one and K drafts, logits at
   every position) for K = 0..8, against one token (K = 0): what checking K drafts costs;
2. replies, greedy, `--tokens` long, each `--repeats` times, on a prompt that repeats itself:
   - "plain": no drafts (CPU sampling, the path drafts take); "gpu": no drafts, sampled in
     the GPU graph (the engine's default there);
   - "ngram": drafts from the context's earlier tokens (`NgramDrafter`); on random weights
     its acceptance says little about real text;
   - "pinned", "pinned+drafts", "pinned gpu": one token biased to be the greedy choice
     everywhere, so n-gram drafts of it are always right: the ceiling of any drafter at
     this draft length (`drafting.MOST_DRAFTS`), with the model's real verify and sampling
     costs, against the same reply without drafts on the CPU and on the GPU;
3. derived (not measured): the speed-up a drafter with acceptance length L would give, from
   the measured verify costs: (L + 1) / (cost(K) / cost(0)), with L taken from published
   EAGLE-3 heads for gpt-oss.

Run: python bench/speculative.py MODEL.gguf [--gpu-layers -1] [--tokens 256] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
PROMPT = "def area(width, height):\n    return width * height\n\n" * 40
# Published mean acceptance lengths of EAGLE-3 heads for gpt-oss at batch 1 are not pinned
# here; these are the draft lengths the derived table is shown for.
ACCEPTANCE_LENGTHS = (1.0, 1.5, 2.0, 2.5, 3.0)


def verify_costs(backend: Any, most: int, repeats: int) -> dict[int, float]:
    """Milliseconds of one decode of 1 + K tokens after the cached prompt, K = 0..`most`."""
    from gptoss_local.backends.llamacpp import native

    b = native.lib()
    context = backend._native.context
    cache = backend.cache
    memory = b.llama_get_memory(context)
    start = len(cache.tokens)
    batch = b.llama_batch_init(most + 1, 0, 1)
    costs: dict[int, float] = {}
    try:
        for k in range(most + 1):
            times = []
            for _ in range(repeats + 2):  # two to warm up
                for i in range(k + 1):
                    batch.token[i] = cache.tokens[-1 - i]
                    batch.pos[i] = start + i
                    batch.n_seq_id[i] = 1
                    batch.seq_id[i][0] = cache.sequence
                    batch.logits[i] = 1
                batch.n_tokens = k + 1
                began = time.perf_counter()
                assert b.llama_decode(context, batch) == 0
                b.llama_synchronize(context)
                times.append(time.perf_counter() - began)
                b.llama_memory_seq_rm(memory, cache.sequence, start, -1)
            costs[k] = 1000 * statistics.median(times[2:])
    finally:
        b.llama_batch_free(batch)
    return costs


def derived(length: float, costs: dict[int, float]) -> float:
    """The speed-up of drafts kept `length` at a time, verifying ceil(length) + 1 of them."""
    k = min(max(costs), math.ceil(length) + 1)
    return (length + 1) / (costs[k] / costs[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path)
    parser.add_argument("--gpu-layers", type=int, default=0)
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", default="")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    from engine_helpers import chat, ran

    from gptoss_local.backends.base import GenerationSettings, ReplyRequest
    from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
    from gptoss_local.backends.llamacpp.load import LoadSettings
    from gptoss_local.backends.llamacpp.options import LlamaOptions

    backend = LlamaCppBackend(args.model, LoadSettings(context=4096, gpu_layers=args.gpu_layers))
    greedy = GenerationSettings(temperature=0.0, max_tokens=args.tokens)
    ran(backend.stream(ReplyRequest(chat(PROMPT), greedy)))  # warms up; the cache holds it
    costs = verify_costs(backend, 8, args.repeats * 10)
    # One token made the greedy choice everywhere: drafts of it are always right, so this
    # measures the ceiling with the model's real verify and sampling costs. (The plain reply's
    # own tokens cannot serve on random weights: their near-ties flip with the batch's
    # rounding, so nearly every draft of them is refused.)
    pin = ((backend.tokenize(" the", False)[0], 100.0),)
    pinned = replace(greedy, logit_bias=pin)
    on_gpu = args.gpu_layers != 0
    runs = {
        "plain": (greedy, LlamaOptions()),
        "ngram": (greedy, LlamaOptions(draft="ngram")),
        "gpu": (greedy, LlamaOptions(backend_sampling=on_gpu)),
        "pinned": (pinned, LlamaOptions()),
        "pinned+drafts": (pinned, LlamaOptions(draft="ngram")),
        "pinned gpu": (pinned, LlamaOptions(backend_sampling=on_gpu)),
    }
    rates: dict[str, list[float]] = {name: [] for name in runs}
    kept: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(args.repeats):
        for name, (settings, options) in runs.items():
            reply = ran(backend.stream(ReplyRequest(chat(PROMPT), settings), options=options))
            stats = reply.stats  # a decode per token not taken from a draft
            rates[name].append(stats.decode_tokens_per_second or 0.0)
            kept[name].append(stats.generated_tokens / max(stats.generated_tokens
                                                           - stats.accepted_tokens, 1))  # fmt: skip
    backend.close()
    mean = {name: statistics.mean(values) for name, values in rates.items()}
    lines = [
        "Speculative decoding: what verifying drafts costs and what it can win "
        "(bench/speculative.py)",
        f"command: python bench/speculative.py {args.model.name} --gpu-layers {args.gpu_layers} "
        f"--tokens {args.tokens} --repeats {args.repeats}",
        f"machine: {args.device or platform.machine()}; {platform.platform()}",
        "",
        "measured: one decode of 1 + K tokens (ms, median), and against K = 0",
        *(f"  K={k}  {ms:7.2f} ms  x{ms / costs[0]:.2f}" for k, ms in costs.items()),
        "",
        "measured: greedy replies, decode tokens/s (tokens per decode)",
        *(
            f"  {name:7s} {mean[name]:8.1f} tok/s  (runs: "
            f"{', '.join(f'{r:.1f}' for r in rates[name])}; tokens per decode "
            f"{statistics.mean(kept[name]):.2f})"
            for name in runs
        ),
        f"  ngram / plain: {mean['ngram'] / mean['plain']:.2f}   "
        f"pinned+drafts / pinned: {mean['pinned+drafts'] / mean['pinned']:.2f}   "
        f"pinned+drafts / pinned gpu: {mean['pinned+drafts'] / mean['pinned gpu']:.2f}",
        "",
        "derived (not measured): speed-up over plain for a drafter whose drafts are kept L at a",
        "time on average, verifying K = ceil(L) + 1 drafts: (L + 1) / (cost(K) / cost(0))",
        *(f"  L={length:.1f}  x{derived(length, costs):.2f}" for length in ACCEPTANCE_LENGTHS),
    ]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.out:
        args.out.write_text(text)
        data = {"verify_ms": costs, "rates": rates, "tokens_per_decode": kept}
        args.out.with_suffix(".json").write_text(json.dumps(data))


if __name__ == "__main__":
    main()
