"""Decode speed of an answer held to a JSON schema against a free one (bench/RESULTS.md).

The random-weight model is taken to the final channel's header by a steering grammar
(`<|channel|>final<|message|>` then any tokens), so that every timed token is answer; the
same steering in both runs, so both sample on the CPU (a chain with a grammar stage is not
offloaded). Runs, each `--repeats` times, side by side in one process:

- "free": the answer is any text, end tokens banned, `--tokens` tokens;
- "schema": the answer is held to an array of `--tokens // 3` integers by the engine's grammar
  (`ResponseFormat`), about as many tokens;
- "gpu": for scale, a free reply with no steering, sampled on the GPU (the engine's default).

Decode tokens/s is the engine's own figure (`Stats.decode_tokens_per_second`). Give it a model
with gpt-oss's real vocabulary (`bench/gpu/steps.py`'s "20b-o200k" shape): what a grammar costs
depends on what the tokens spell, which a made-up vocabulary does not show.

Run: python bench/structured_decode.py MODEL.gguf [--gpu-layers -1] [--tokens 600] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
TO_THE_ANSWER = 'root ::= <|channel|> "final" <|message|> .*'


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path)
    parser.add_argument("--gpu-layers", type=int, default=0)
    parser.add_argument("--tokens", type=int, default=600)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", default="")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    from engine_helpers import chat, never_stop, ran

    from gptoss_local.backends.base import GenerationSettings, ReplyRequest, ResponseFormat
    from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
    from gptoss_local.backends.llamacpp.load import LoadSettings
    from gptoss_local.backends.llamacpp.options import LlamaOptions
    from gptoss_local.schemas import check_answer

    backend = LlamaCppBackend(args.model, LoadSettings(context=4096, gpu_layers=args.gpu_layers))
    on_gpu = args.gpu_layers != 0
    count = args.tokens // 3
    shape = {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 99},
             "minItems": count, "maxItems": count}  # fmt: skip
    held = ResponseFormat(shape, "numbers")
    runs = {
        "free": (None, LlamaOptions(grammar=TO_THE_ANSWER, logit_bias=never_stop(backend))),
        "schema": (held, LlamaOptions(grammar=TO_THE_ANSWER)),
        "gpu": (None, LlamaOptions(logit_bias=never_stop(backend), backend_sampling=on_gpu)),
    }
    rates: dict[str, list[float]] = {name: [] for name in runs}
    tokens: dict[str, list[int]] = {name: [] for name in runs}
    for repeat in range(args.repeats + 1):  # the first round warms up, and is not counted
        for name, (fmt, options) in runs.items():
            limit = args.tokens * 4 if fmt is not None else args.tokens  # JSON ends itself
            settings = GenerationSettings(seed=repeat + 1, max_tokens=limit)
            reply = ran(backend.stream(ReplyRequest(chat("numbers"), settings, fmt),
                                       options=options))  # fmt: skip
            if fmt is not None and reply.stats.stop_reason != "length":
                answer = "".join(getattr(e, "text", "") for e in reply if type(e).__name__ ==
                                 "AnswerDelta")  # fmt: skip
                check_answer(answer, fmt)
            if repeat:
                rates[name].append(reply.stats.decode_tokens_per_second or 0.0)
                tokens[name].append(reply.stats.generated_tokens)
    backend.close()
    mean = {name: statistics.mean(values) for name, values in rates.items()}
    lines = [
        "Decode with the answer held to a JSON schema (bench/structured_decode.py)",
        f"command: python bench/structured_decode.py {args.model.name} --gpu-layers "
        f"{args.gpu_layers} --tokens {args.tokens} --repeats {args.repeats}",
        f"machine: {args.device or platform.machine()}; {platform.platform()}",
        "",
        *(
            f"{name:6s} {mean[name]:8.1f} tok/s  (runs: "
            f"{', '.join(f'{r:.1f}' for r in rates[name])}; tokens: {tokens[name]})"
            for name in runs
        ),
        "",
        f"schema / free (same sampling path): {mean['schema'] / mean['free']:.2f}",
        f"schema / gpu-sampled free reply: {mean['schema'] / mean['gpu']:.2f}",
    ]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.out:
        args.out.write_text(text)
        args.out.with_suffix(".json").write_text(json.dumps({"rates": rates, "tokens": tokens}))


if __name__ == "__main__":
    main()
