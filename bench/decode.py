"""Decode speed of gptoss-local's loop against llama-cpp-python's `Llama.generate()`, side by side.

Both run in this process on the same synthetic gpt-oss GGUF, the same prompt and the same number
of generated tokens, alternating repetitions; the figure is each runner's median decode tokens/s
and the ratio of ours to theirs. End tokens are banned (a logit bias, in our chain only) so every
run generates the full count. CPU only unless the installed llama-cpp-python has a GPU backend.

Run: `python bench/decode.py [--shapes tiny small] [--runs 5] [--out FILE]`
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # tests/synthetic

from synthetic import PRESETS, write_gguf

from gptoss_local.backends.base import GenerationSettings, ReplyRequest
from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
from gptoss_local.backends.llamacpp.load import LoadSettings
from gptoss_local.backends.llamacpp.options import LlamaOptions
from gptoss_local.conversation import Conversation, Message
from gptoss_local.harmony import render_prompt

TOKENS = {"tiny": 1024, "tiny-vocab": 512, "small": 256, "20b": 128, "120b": 128}
MODES = {"greedy": {"temperature": 0.0}, "temp 1, top-p 1": {"temperature": 1.0, "top_p": 1.0}}
QUESTION = "Explain how a bicycle stays upright, step by step."


def reference_model(path: Path, context: int, threads: int):  # type: ignore[no-untyped-def]
    """llama-cpp-python's own high-level class, configured like our backend."""
    import llama_cpp
    import llama_cpp.llama_cpp as bindings

    defaults = bindings.llama_model_default_params

    def params():  # the same AMX workaround our loader applies
        p = defaults()
        p.use_extra_bufts = "AMX_INT8 = 1" not in bindings.llama_print_system_info().decode()
        return p

    bindings.llama_model_default_params = params
    try:
        return llama_cpp.Llama(
            str(path), n_ctx=context, n_threads=threads, n_batch=512, n_gpu_layers=-1,
            flash_attn=True, verbose=False,
        )  # fmt: skip
    finally:
        bindings.llama_model_default_params = defaults


def time_reference(llm, prompt: list[int], count: int, mode: dict) -> float:  # type: ignore[no-untyped-def]
    temp = mode["temperature"]
    sampling = {"temp": temp, "top_k": 0, "top_p": mode.get("top_p", 1.0), "min_p": 0.0}
    first = last = 0.0
    for index, _ in enumerate(llm.generate(prompt, reset=True, **sampling)):
        last = time.perf_counter()
        first = first or last
        if index + 1 == count:
            break
    return (count - 1) / (last - first)


def time_ours(
    backend: LlamaCppBackend, conversation: Conversation, count: int, mode: dict
) -> float:
    ban = tuple(
        (backend.tokenize(t)[0], float("-inf")) for t in ("<|return|>", "<|call|>", "<|endoftext|>")
    )
    settings = GenerationSettings(max_tokens=count, seed=1, **mode)
    backend.cache.clear()  # no reuse: each run evaluates the whole prompt, like the reference
    asked = ReplyRequest(conversation, settings)
    stats = backend.stream(asked, options=LlamaOptions(logit_bias=ban)).drain()[1]
    assert stats.generated_tokens == count
    return float(stats.decode_tokens_per_second or 0.0)


def bench_shape(shape: str, runs: int, folder: Path) -> list[str]:
    path = write_gguf(folder / f"{shape}.gguf", PRESETS[shape], seed=0)
    count = TOKENS[shape]
    conversation = Conversation((Message("user", QUESTION),))
    settings = LoadSettings(context=4096, gpu_layers=-1)
    lines = []
    with LlamaCppBackend(path, settings, log_path=folder / "llama.log") as ours:
        prompt = ours.tokenize(render_prompt(list(conversation.messages)))
        reference = reference_model(path, 4096, ours._native.threads)
        for name, mode in MODES.items():
            time_ours(ours, conversation, count, mode)  # warm-up, both
            time_reference(reference, prompt, count, mode)
            mine, theirs = [], []
            for _ in range(runs):
                mine.append(time_ours(ours, conversation, count, mode))
                theirs.append(time_reference(reference, prompt, count, mode))
            a, b = statistics.median(mine), statistics.median(theirs)
            lines.append(f"{shape:10} {name:16} {count:6} {a:10.1f} {b:12.1f} {a / b:7.2f}")
        reference.close()
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--shapes", nargs="+", default=["tiny", "tiny-vocab", "small"], choices=sorted(PRESETS)
    )
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    import llama_cpp

    header = [
        f"command: python bench/decode.py --shapes {' '.join(args.shapes)} --runs {args.runs}",
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs; "
        f"Python {platform.python_version()}; llama-cpp-python {llama_cpp.__version__}; "
        f"GPU offload: {llama_cpp.llama_supports_gpu_offload()}",
        "decode tokens/s, median of the runs; ratio = ours / llama-cpp-python Llama.generate()",
        f"{'shape':10} {'sampling':16} {'tokens':>6} {'ours':>10} {'generate()':>12} {'ratio':>7}",
    ]
    with tempfile.TemporaryDirectory(prefix="gptoss-bench-") as tmp:
        rows = [row for shape in args.shapes for row in bench_shape(shape, args.runs, Path(tmp))]
    report = "\n".join(header + rows) + "\n"
    sys.stdout.write(report)
    if args.out:
        args.out.write_text(report)


if __name__ == "__main__":
    main()
