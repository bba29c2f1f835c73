"""The measurement steps of run_all.py. Each returns (raw results, summary table lines)."""

from __future__ import annotations

import argparse
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import llama_tools
from synthetic import PRESETS, write_gguf

from gptoss_local import benchmark
from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
from gptoss_local.backends.llamacpp.load import LoadSettings
from gptoss_local.conversation import Message
from gptoss_local.harmony import render_prompt

GENERATE = 128


@dataclass
class Run:
    """What every step needs: the llama.cpp binaries, the model file, the output folder."""

    bin: Path
    model: Path
    out: Path
    repeats: int

    @property
    def logs(self) -> Path:
        """Native logs go beside the model, not into the (size-limited) output folder."""
        folder = self.model.parent / "logs"
        folder.mkdir(exist_ok=True)
        return folder


def synthetic_model(shape: str, folder: Path) -> Path:
    """The synthetic model of `shape`, written once (a 20b-shaped file takes ~30 s); a shape
    ending in "-o200k" carries gpt-oss's real vocabulary (needs toktok) instead of the made-up
    one, for measurements where what the tokens spell matters (grammars)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"synthetic-{shape}.gguf"
    if not path.exists():
        base, real_vocab = shape.removesuffix("-o200k"), shape.endswith("-o200k")
        tokenizer = None
        if real_vocab:
            from o200k_gguf import add_o200k_tokenizer

            tokenizer = add_o200k_tokenizer
        partial = path.with_suffix(".partial")
        write_gguf(partial, PRESETS[base], seed=0, tokenizer=tokenizer).rename(path)
    return path


def llama_bench(run: Run, args: argparse.Namespace) -> tuple[object, list[str]]:
    rows = llama_tools.llama_bench(
        run.bin, run.model, "512,2048", GENERATE, args.depths, run.repeats
    )
    table = [f"{'test':8} {'depth':>6} {'t/s':>10} {'±':>7}"]
    table += [
        f"{r['test']:8} {r['depth']:6} {r['tokens_per_second']:10.1f} {r['stddev']:7.1f}"
        for r in rows
    ]
    return rows, table


def server(run: Run, args: argparse.Namespace) -> tuple[object, list[str]]:
    prompt = render_prompt([Message("user", "Write a long story about a lighthouse keeper.")])
    results = []
    for flags in ((), ("--backend-sampling",)):
        log = run.logs / "llama-server.log"
        with llama_tools.llama_server(run.bin, run.model, 4096, flags, log) as port:
            llama_tools.stream_completion(port, prompt, 16, "greedy")  # warm-up
            for sampling in ("greedy", "default"):
                best = max(
                    (
                        llama_tools.stream_completion(port, prompt, GENERATE, sampling)
                        for _ in range(run.repeats)
                    ),
                    key=lambda r: r["client_tokens_per_second"],
                )
                results.append({"flags": " ".join(flags), "sampling": sampling, **best})
    table = [f"{'llama-server':34} {'client t/s':>10} {'server t/s':>10}"]
    table += [
        f"{(r['sampling'] + ' ' + r['flags']).strip():34} {r['client_tokens_per_second']:10.1f} "
        f"{r['server_tokens_per_second']:10.1f}"
        for r in results
    ]
    return results, table


def ours(run: Run, args: argparse.Namespace) -> tuple[object, list[str]]:
    depths = [int(d) for d in args.depths.split(",")]
    settings = LoadSettings(context=max(depths) + 4096, gpu_layers=-1)
    rows = []
    with LlamaCppBackend(run.model, settings, log_path=run.logs / "ours.log") as backend:
        modes = [("greedy", False), ("default", False)]
        modes += [("greedy", True), ("default", True)] if args.backend_sampling else []
        for sampling, on_gpu in modes:
            name = f"{sampling}{' backend-sampled' if on_gpu else ''}"
            # The shortest prompt (the Harmony system message and a line): depth ~0, as tg128.
            m = benchmark.measure(backend, name, 0, GENERATE, sampling, on_gpu, run.repeats)
            rows.append({"kind": "decode", "depth": 0, **asdict(m)})
        for prompt in (512, 2048):
            m = benchmark.measure(
                backend, f"prefill {prompt}", prompt, 1, "greedy", False, run.repeats
            )
            rows.append({"kind": "prefill", "depth": 0, **asdict(m)})
        for depth in depths[1:]:
            for on_gpu in (False, True) if args.backend_sampling else (False,):
                name = f"greedy at {depth}{' backend-sampled' if on_gpu else ''}"
                m = benchmark.measure(backend, name, depth, GENERATE, "greedy", on_gpu, run.repeats)
                rows.append({"kind": "decode", "depth": depth, **asdict(m)})
    table = [f"{'ours':34} {'prompt':>7} {'prefill t/s':>12} {'decode t/s':>11}"]
    table += [
        f"{r['name']:34} {r['prompt_tokens']:7} {r['prefill_tokens_per_second']:12.1f} "
        f"{r['decode_tokens_per_second']:11.1f}"
        for r in rows
    ]
    return rows, table


def ttft(run: Run, args: argparse.Namespace) -> tuple[object, list[str]]:
    """Time to first token of a chat's second turn after a 4k-token first turn."""
    with LlamaCppBackend(
        run.model, LoadSettings(context=16384), log_path=run.logs / "ttft.log"
    ) as backend:
        first = benchmark.filler_conversation(backend, 4096)
        one = benchmark.run_once(backend, first, 32)
        reply = Message(
            "assistant", "A short summary of the text.", reasoning="The user wants a summary."
        )
        follow_up = (*first.messages, reply, Message("user", "Now in one sentence?"))
        second = replace(first, messages=follow_up)  # same date: the prefix must match
        two = benchmark.run_once(backend, second, 32, keep_cache=True)
    rows = [{"turn": n, **asdict(s)} for n, s in ((1, one), (2, two))]
    table = [f"{'turn':5} {'prompt':>7} {'cached':>7} {'evaluated':>10} {'TTFT s':>8}"]
    table += [
        f"{r['turn']:5} {r['prompt_tokens']:7} {r['cached_tokens']:7} {r['evaluated_tokens']:10} "
        f"{r['ttft_seconds']:8.3f}"
        for r in rows
    ]
    return rows, table


from steps_memory import offload, planner  # noqa: E402  (re-exported for run_all.py)

__all__ = ["Run", "llama_bench", "offload", "ours", "planner", "server", "synthetic_model", "ttft"]
