"""What compaction costs a chat: the summary's time, and the re-prefill of the shorter prompt
after it, beside an ordinary reply of the same chat.

A chat (saved in a real SQLite history) grows turn by turn until its next prompt passes the
context's prompt limit; the chat's own `ContextKeeper` then summarises the oldest turns, as
the app does before that reply. Measured, per run:
- "reply before": the last reply that still fit — its prompt was mostly cached (the previous
  turn's), so its TTFT is the usual one;
- "summary": the keeper's whole fit (counting, the summary requests at low effort, saving);
- "reply after": the first reply on the compacted prompt — its prefix changed (the summary
  stands where the old turns were), so the whole prompt is evaluated again;
- "reply after that": the next turn, cached again.
Random weights rarely end a summary early: the summary runs to its token limit (the budget's
summary room), which is the slowest case a real model can take.

Run: `python bench/compaction.py MODEL [--context 16384] [--gpu-layers -1] [--runs 2]`
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gptoss_local.backends.base import GenerationSettings, ReplyRequest, Stats
from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
from gptoss_local.backends.llamacpp.load import LoadSettings
from gptoss_local.backends.llamacpp.options import LlamaOptions
from gptoss_local.chat.context_budget import Budget
from gptoss_local.chat.context_keeper import ContextKeeper
from gptoss_local.events import AnswerDelta
from gptoss_local.session.history import History

WORDS = (
    "Tell me more about the history of lighthouses, their keepers, the lamps and lenses they "
    "used, and how the work changed when the lights were automated. "
)


def reply(
    backend: LlamaCppBackend,
    history: History,
    chat: int,
    keeper: ContextKeeper,
    settings: GenerationSettings,
    question: str,
) -> tuple[Stats, float, float]:
    """One turn as the chat makes it: fit the prompt (compacting if need be), then answer.
    Returns the reply's stats, the fit's seconds and the whole turn's seconds."""  # fmt: skip
    history.add_user_message(chat, question)
    started = time.perf_counter()
    request = keeper.fit(backend, ReplyRequest(history.to_conversation(chat), settings))
    fitted = time.perf_counter() - started
    events, stats = backend.stream(request).drain()
    answer = "".join(e.text for e in events if isinstance(e, AnswerDelta))
    saved = history.begin_assistant_message(chat, effort=settings.effort).id
    history.append_to_assistant(saved, answer=answer or "(no answer)")
    history.finish_assistant(saved, stats)
    return stats, fitted, time.perf_counter() - started


def one_run(backend: LlamaCppBackend, args: argparse.Namespace, folder: Path, run: int) -> dict:
    settings = GenerationSettings(effort="low", temperature=0.0, max_tokens=args.reply_tokens)
    budget = Budget(args.context, settings.effort)
    with History(folder / f"history-{run}.sqlite3") as history:
        chat = history.create_chat(effort="low").id
        keeper = ContextKeeper(history, chat, "compact")
        turns: list[dict] = []
        compacted_at, summary = None, {}
        while compacted_at is None or len(turns) <= compacted_at + 1:
            question = f"question {len(turns)}: " + WORDS * args.turn_repeats
            stats, fitted, whole = reply(backend, history, chat, keeper, settings, question)
            turns.append({"fit_s": fitted, "turn_s": whole, "ttft_s": stats.ttft_seconds,
                          "prompt_tokens": stats.prompt_tokens,
                          "cached_tokens": stats.cached_tokens})  # fmt: skip
            compaction = history.last_compaction(chat)
            if compacted_at is None and compaction is not None:
                compacted_at = len(turns) - 1
                summary = {"summary_s": compaction.seconds,
                           "summary_tokens": compaction.summary_tokens,
                           "left_out": compaction.messages_left_out,
                           "prompt_tokens_before": compaction.prompt_tokens_before}  # fmt: skip
    assert compacted_at is not None and compacted_at > 0
    return {"budget": {"prompt_limit": budget.prompt_limit, "summary_room": budget.summary_tokens},
            "before": turns[compacted_at - 1], "compacted": turns[compacted_at],
            "after": turns[compacted_at + 1], "summary": summary, "turns": len(turns)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path)
    parser.add_argument("--context", type=int, default=16384)
    parser.add_argument("--gpu-layers", type=int, default=-1)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--reply-tokens", type=int, default=128)
    parser.add_argument("--turn-repeats", type=int, default=12, help="filler sentences a question")
    parser.add_argument("--device", default="")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    load = LoadSettings(context=args.context, gpu_layers=args.gpu_layers)
    runs = []
    with LlamaCppBackend(args.model, load) as backend, tempfile.TemporaryDirectory() as folder:
        backend.options = LlamaOptions(backend_sampling=args.gpu_layers != 0)
        for run in range(args.runs):
            runs.append(one_run(backend, args, Path(folder), run))
            print(json.dumps(runs[-1]), flush=True)
    med = lambda key, field: statistics.median(r[key][field] for r in runs)  # noqa: E731
    lines = [
        "Compaction's cost (bench/compaction.py)",
        f"command: python bench/compaction.py {' '.join(sys.argv[1:])}",
        f"machine: {args.device or platform.node()}; {platform.platform()}; {dt.date.today()}",
        f"context {args.context}, prompt limit {runs[0]['budget']['prompt_limit']}, summary room "
        f"{runs[0]['budget']['summary_room']} tokens; medians of {len(runs)} runs",
        f"reply before (cached prefix): TTFT {med('before', 'ttft_s'):.3f} s, prompt "
        f"{med('before', 'prompt_tokens'):.0f} tokens, {med('before', 'cached_tokens'):.0f} cached",
        f"summary: {med('summary', 'summary_s'):.2f} s for {med('summary', 'summary_tokens'):.0f} "
        f"tokens, {med('summary', 'left_out'):.0f} messages left out of a "
        f"{med('summary', 'prompt_tokens_before'):.0f}-token prompt; the whole fit "
        f"{med('compacted', 'fit_s'):.2f} s",
        f"reply after (re-prefill): TTFT {med('compacted', 'ttft_s'):.3f} s, prompt "
        f"{med('compacted', 'prompt_tokens'):.0f} tokens, "
        f"{med('compacted', 'cached_tokens'):.0f} cached",
        f"reply after that (cached again): TTFT {med('after', 'ttft_s'):.3f} s",
        f"the compacting turn took {med('compacted', 'turn_s'):.2f} s against "
        f"{med('before', 'turn_s'):.2f} s for the turn before it",
    ]
    print("\n".join(lines))
    if args.out:
        args.out.write_text("\n".join(lines) + "\njson: " + json.dumps(runs) + "\n")


if __name__ == "__main__":
    main()
