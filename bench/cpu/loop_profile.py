"""Where a decoded token's time goes in our loop, against bare native loops on the same context.

For one synthetic GGUF, in this process: milliseconds per generated token of
- `decode`: bare `llama_decode` calls of one token each (what llama-bench's tg test does),
- `decode+chain`: the same, each followed by one `llama_sampler_sample` through the chain our
  backend builds (greedy, or temperature 1 / top-p 1 = the full-vocabulary `dist`),
- `decode, in graph`: the chain attached to the context (`llama_set_sampler`), so llama.cpp
  samples inside its compute graph and the token is only read back,
- `ours`: `LlamaCppBackend.stream(...).drain()` with end tokens banned (CPU chain, and
  `backend_sampling` for the in-graph chain);
and the Python share of ours over the bare loop with the same sampling. `--profile` adds the
top of a cProfile of our loop.

Run: python bench/cpu/loop_profile.py MODEL.gguf [--tokens 256] [--runs 5] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT)]

from gptoss_local.backends.base import GenerationSettings  # noqa: E402
from gptoss_local.backends.llamacpp import native  # noqa: E402
from gptoss_local.backends.llamacpp.backend import LlamaCppBackend  # noqa: E402
from gptoss_local.backends.llamacpp.load import LoadSettings  # noqa: E402
from gptoss_local.backends.llamacpp.options import LlamaOptions  # noqa: E402
from gptoss_local.backends.llamacpp.sampling import Sampler  # noqa: E402
from gptoss_local.benchmark import filler_conversation, run_once  # noqa: E402
from gptoss_local.harmony import render_prompt  # noqa: E402

MODES = {"greedy": {"temperature": 0.0}, "default": {"temperature": 1.0, "top_p": 1.0}}


def bare(backend: LlamaCppBackend, prompt: list[int], tokens: int, mode: str | None,
         in_graph: bool = False) -> float:  # fmt: skip
    """Milliseconds per token of a bare native loop (`mode` None: no sampling at all)."""
    b, context = native.lib(), backend._native.context
    backend.cache.clear()
    sampler = None
    if mode is not None:
        options = LlamaOptions(backend_sampling=in_graph)
        sampler = Sampler(backend._native.vocab, GenerationSettings(seed=1, **MODES[mode]),  # type: ignore[arg-type]
                          options, context if in_graph else None)  # fmt: skip
        if in_graph and not sampler.attached:
            sampler.free()
            return float("nan")
    try:
        array = (b.llama_token * len(prompt))(*prompt)
        if b.llama_decode(context, b.llama_batch_get_one(array, len(prompt))) != 0:
            raise RuntimeError("prompt decode failed")
        one = (b.llama_token * 1)(prompt[-1])
        batch = b.llama_batch_get_one(one, 1)
        token = sampler.sample(context) if sampler else prompt[-1]
        start = time.perf_counter()
        for _ in range(tokens):
            one[0] = token
            if b.llama_decode(context, batch) != 0:
                raise RuntimeError("decode failed")
            token = sampler.sample(context) if sampler else token
        b.llama_synchronize(context)
        return (time.perf_counter() - start) * 1000 / tokens
    finally:
        if sampler is not None:
            sampler.free()
        backend.cache.clear()


def ours(backend: LlamaCppBackend, conversation: Any, tokens: int, mode: str, graph: bool) -> float:
    """Milliseconds per token of our loop (between its first and last sampled token)."""
    stats = run_once(backend, conversation, tokens + 1, mode, graph)
    return 1000 / (stats.decode_tokens_per_second or float("nan"))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("model", type=Path)
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--threads", type=int, default=0, help="0: the loader's choice")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    settings = LoadSettings(context=4096, gpu_layers=0, threads=args.threads or None)
    with LlamaCppBackend(args.model, settings, log_path=Path("/tmp/loop_profile.log")) as backend:
        conversation = filler_conversation(backend, 64)
        messages = list(conversation.messages)
        prompt = backend.tokenize(render_prompt(messages, current_date=conversation.current_date))
        n = args.tokens
        print(f"model {args.model.name}, {backend._native.threads} threads, {n} tokens, "
              f"median of {args.runs}")  # fmt: skip
        runners = {
            "decode": lambda: bare(backend, prompt, n, None),
            **{f"decode+chain {m}": (lambda m=m: bare(backend, prompt, n, m)) for m in MODES},
            **{f"decode, in graph {m}": (lambda m=m: bare(backend, prompt, n, m, True))
               for m in MODES},
            **{f"ours {m}": (lambda m=m: ours(backend, conversation, n, m, False)) for m in MODES},
            **{f"ours in graph {m}": (lambda m=m: ours(backend, conversation, n, m, True))
               for m in MODES},
        }  # fmt: skip
        for run in runners.values():
            run()  # warm-up
        times: dict[str, list[float]] = {name: [] for name in runners}
        for _ in range(args.runs):  # interleaved, so load from elsewhere hits every runner alike
            for name, run in runners.items():
                times[name].append(run())
        median = {name: statistics.median(values) for name, values in times.items()}
        for name, ms in median.items():
            ratio = median["decode"] / ms
            print(f"{name:28} {ms:8.3f} ms/token  {1000 / ms:9.1f} t/s  ÷decode {ratio:5.2f}")
        for m in MODES:
            share = 1 - median[f"decode+chain {m}"] / median[f"ours {m}"]
            graph = 1 - median[f"decode, in graph {m}"] / median[f"ours in graph {m}"]
            print(f"python share of ours, {m}: CPU chain {share:6.1%}, in graph {graph:6.1%}")
        if args.profile:
            profiler = cProfile.Profile()
            profiler.enable()
            for _ in range(3):
                ours(backend, conversation, args.tokens, "greedy", False)
            profiler.disable()
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(25)
            print(out.getvalue())


if __name__ == "__main__":
    main()
