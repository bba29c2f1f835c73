"""One load of a model in a fresh process, reported as JSON: VRAM (NVML, device-wide, less the
baseline the caller measured before starting us) after load and after filling the context,
resident RAM, and decode speed. A fresh process per configuration keeps CUDA's own allocations
of one run out of the next one's figures. Timings follow llama-bench: one untimed warm-up run,
then the mean of `--repeats` runs (the first prompt of a process pays CUDA's one-time set-up).

Run: python bench/gpu/offload_probe.py MODEL --cpu-moe N --context C --baseline-mib B
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gptoss_local import benchmark
from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
from gptoss_local.backends.llamacpp.load import LoadSettings

MIB = 1 << 20


def used_vram_mib(baseline: float, index: int = 0) -> int | None:
    """NVML's device-wide used memory less `baseline`; None without a GPU (a CPU rehearsal)."""
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception:
        return None
    try:
        info = pynvml.nvmlDeviceGetMemoryInfo(pynvml.nvmlDeviceGetHandleByIndex(index))
        return round(info.used / MIB - baseline)
    finally:
        pynvml.nvmlShutdown()


def resident_gib() -> float:
    import psutil

    return psutil.Process().memory_info().rss / (1 << 30)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("model", type=Path)
    parser.add_argument("--cpu-moe", type=int, default=0)
    parser.add_argument("--context", type=int, default=4096)
    parser.add_argument("--baseline-mib", type=float, default=0.0)
    parser.add_argument("--threads", type=int)
    parser.add_argument("--generate", type=int, default=64)
    parser.add_argument("--ubatch", type=int, default=512)
    parser.add_argument("--load-mode", choices=["auto", "none", "mmap"], default="auto")
    parser.add_argument("--prefill", type=int, default=0, help="also time a prompt of N tokens")
    parser.add_argument("--repeats", type=int, default=2, help="timed runs after the warm-up")
    parser.add_argument("--expert-bias", choices=["ram", "gpu"], default="ram",
                        help="where the biases of experts kept in RAM live")  # fmt: skip
    args = parser.parse_args()
    settings = LoadSettings(
        context=args.context, gpu_layers=-1, cpu_moe_layers=args.cpu_moe, threads=args.threads,
        n_batch=max(2048, args.ubatch), n_ubatch=args.ubatch, load_mode=args.load_mode,
        expert_bias_on_gpu=args.expert_bias == "gpu",
    )  # fmt: skip
    report: dict = {"cpu_moe_layers": args.cpu_moe, "context": args.context,
                    "ubatch": args.ubatch, "load_mode": args.load_mode,
                    "expert_bias": args.expert_bias}  # fmt: skip
    with LlamaCppBackend(args.model, settings, log_path=args.model.parent / "probe.log") as backend:
        report["vram_after_load_mib"] = used_vram_mib(args.baseline_mib)
        if args.prefill:
            prompt = benchmark.filler_conversation(backend, args.prefill)
            runs = [benchmark.run_once(backend, prompt, 1) for _ in range(1 + args.repeats)]
            speeds = [r.evaluated_tokens / max(r.prefill_seconds, 1e-9) for r in runs]
            report["prefill_tokens"] = runs[0].evaluated_tokens
            report["prefill_first_tokens_per_second"] = round(speeds[0], 1)
            report["prefill_tokens_per_second"] = round(sum(speeds[1:]) / args.repeats, 1)
        if not args.prefill:  # else the timed prompt stands in for the fill
            fill = benchmark.filler_conversation(backend, args.context - args.generate - 64)
            report["context_used"] = benchmark.run_once(backend, fill, args.generate).context_used
        report["vram_after_fill_mib"] = used_vram_mib(args.baseline_mib)
        report["rss_gib"] = round(resident_gib(), 2)
        short = benchmark.filler_conversation(backend, 200)
        decodes = [
            benchmark.run_once(backend, short, args.generate).decode_tokens_per_second or 0.0
            for _ in range(1 + args.repeats)
        ]
        report["decode_tokens_per_second"] = round(sum(decodes[1:]) / args.repeats, 1)
        report["threads"] = backend.info().details.get("threads")
    print(json.dumps(report))


if __name__ == "__main__":
    main()
