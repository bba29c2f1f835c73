"""Tokenizing a long chat's next prompt: our engine (which takes the shared start from the last
prompt's tokens) against one llama.cpp call over the whole prompt, side by side on one model.

A chat of N turns is tokenized once (warm-up of both), then the prompt after one more turn is
timed both ways; the tokens must be equal. Run:
  python bench/tokenize_reuse.py MODEL [--turns 500,1000] [--out FILE]
"""

from __future__ import annotations

import argparse
import datetime
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gptoss_local.backends.llamacpp import native
from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
from gptoss_local.backends.llamacpp.load import LoadSettings
from gptoss_local.conversation import Message
from gptoss_local.harmony import render_prompt


def chat(turns: int) -> str:
    """The Harmony prompt of a chat of `turns` questions and answers, and one more question."""
    messages = []
    for n in range(turns):
        messages.append(Message("user", f"Question {n}: how do I sort a list in Python? " * 3))
        messages.append(Message("assistant", f"Use sorted(x) or x.sort(); answer {n}. " * 5))
    messages.append(Message("user", "One more question."))
    return render_prompt(messages, current_date=datetime.date(2026, 12, 3))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("model", type=Path)
    parser.add_argument("--turns", default="100,500,1000")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    lines = [f"command: {' '.join(sys.argv)}",
             f"machine: {platform.machine()}, {platform.processor() or '?'}, Python "
             f"{platform.python_version()}",
             f"{'turns':>6} {'characters':>11} {'tokens':>8} {'one call s':>11} {'ours s':>8} "
             f"{'ratio':>6}"]  # fmt: skip
    with LlamaCppBackend(args.model, LoadSettings(context=4096, gpu_layers=0)) as backend:
        vocab = backend._native.vocab
        for turns in (int(t) for t in args.turns.split(",")):
            backend.tokenize(chat(turns))  # the chat so far, as the last reply's prompt
            text = chat(turns + 1)
            started = time.perf_counter()
            reference = native.tokenize(vocab, text, True)
            one_call = time.perf_counter() - started
            started = time.perf_counter()
            ours = backend.tokenize(text)
            reused = time.perf_counter() - started
            assert ours == reference, "the tokens differ"
            lines.append(f"{turns:>6} {len(text):>11,} {len(ours):>8,} {one_call:>11.3f} "
                         f"{reused:>8.3f} {reused / one_call:>6.3f}")  # fmt: skip
    report = "\n".join(lines) + "\n"
    print(report, end="")
    if args.out:
        args.out.write_text(report)


if __name__ == "__main__":
    main()
