"""Time to first token with and without prefill (`Backend.prefill`), side by side.

The chat app prefills while the user types: after a load, after each reply, when a saved chat
is opened. This measures what that buys for the first reply after a load, in two cases:

- a new chat: cold (load, send) against warm (load, prefill the system message, send);
- a reopened chat with a long history: cold (load, send) against warm (load, prefill the
  history, send) — the prefill is what the app does while the user reads and types.

Each case loads the model afresh per run, so the first decode after a load is in every figure;
runs alternate cold and warm. Greedy, 8 tokens, GPU sampling when a GPU is used.

Run: `python bench/prefill.py MODEL [--history-tokens 4096] [--runs 3] [--gpu-layers -1]`
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gptoss_local.backends.base import GenerationSettings, ReplyRequest
from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
from gptoss_local.backends.llamacpp.load import LoadSettings
from gptoss_local.backends.llamacpp.options import LlamaOptions
from gptoss_local.conversation import Conversation, Message
from gptoss_local.harmony import render_prompt

DATE = dt.date(2026, 12, 2)
FILLER = (
    "Tell me more about the history of lighthouses, their keepers, the lamps and lenses they "
    "used, and how the work changed when the lights were automated. "
)


def history_of(backend: LlamaCppBackend, tokens: int) -> tuple[Message, ...]:
    """User/assistant exchanges until the rendered history has about `tokens` tokens."""
    messages: list[Message] = []
    while len(backend.tokenize(render_prompt(messages, current_date=DATE))) < tokens:
        messages += [Message("user", FILLER), Message("assistant", FILLER * 3, reasoning="ok")]
    return tuple(messages)


def first_reply(
    backend: LlamaCppBackend,
    conversation: Conversation,
    settings: GenerationSettings,
    options: LlamaOptions,
) -> dict:
    s = backend.stream(ReplyRequest(conversation, settings), options=options).drain()[1]
    return {"ttft": s.ttft_seconds, "cached": s.cached_tokens, "evaluated": s.evaluated_tokens}


def run_case(args: argparse.Namespace, history_tokens: int, warm: bool) -> dict:
    load = LoadSettings(context=args.context, gpu_layers=args.gpu_layers)
    with LlamaCppBackend(args.model, load) as backend:
        gpu = args.gpu_layers != 0
        settings = GenerationSettings(temperature=0.0, max_tokens=8)
        options = LlamaOptions(backend_sampling=gpu)
        past = history_of(backend, history_tokens) if history_tokens else ()
        question = Message("user", "And what about the lighthouse of Alexandria?")
        prefill = None
        if warm:
            started = time.perf_counter()
            so_far = Conversation(past, current_date=DATE)
            backend.prefill(ReplyRequest(so_far, settings), options=options)
            prefill = time.perf_counter() - started
        asked = Conversation((*past, question), current_date=DATE)
        result = first_reply(backend, asked, settings, options)
        return {**result, "prefill_seconds": prefill}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path)
    parser.add_argument("--history-tokens", type=int, default=4096)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--context", type=int, default=8192)
    parser.add_argument("--gpu-layers", type=int, default=-1)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    report: dict = {"command": " ".join(sys.argv), "machine": platform.platform(), "cases": {}}
    for name, tokens in (
        ("new chat", 0),
        (f"{args.history_tokens}-token history", args.history_tokens),
    ):
        runs: dict[str, list[dict]] = {"cold": [], "warm": []}
        for _ in range(args.runs):
            for kind in ("cold", "warm"):
                runs[kind].append(run_case(args, tokens, kind == "warm"))
        cold = statistics.median(r["ttft"] for r in runs["cold"])
        warm = statistics.median(r["ttft"] for r in runs["warm"])
        report["cases"][name] = {"ttft_cold_s": cold, "ttft_warm_s": warm,
                                 "warm_over_cold": warm / cold, "runs": runs}  # fmt: skip
        print(f"{name}: first-reply TTFT cold {cold * 1000:.1f} ms, after prefill "
              f"{warm * 1000:.1f} ms (x{warm / cold:.2f})", flush=True)  # fmt: skip
    if args.out:
        args.out.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
