"""The chat TUI on a real GPU, driven headless: load with progress, live VRAM, four turns.

What `gptoss-local chat --model-path MODEL` does, through the same `launch.prepare` and app,
with Textual's test pilot pressing the keys: the model loads inside the app (progress reports
counted), NVML's VRAM use shows in the status bar, and four messages are sent (later ones reuse
the earlier prefix). Replies are capped at 256 tokens with the end tokens banned, since the
synthetic model's random weights would otherwise stop anywhere.

With `--engine-alone` the same four turns run in this process without the app (the engine
loaded as the app loads it, the same settings and conversation), writing OUT/engine-alone.json:
each turn's decode rate in a fresh process, to set the app's turns against turn by turn.

Run: python bench/gpu/tui_check.py MODEL --out OUT   (writes OUT/tui.json and OUT/tui.svg)
     python bench/gpu/tui_check.py MODEL --out OUT --engine-alone
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import itertools
import json
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))  # tests/synthetic

from gptoss_local import config, heap
from gptoss_local.launch.prepare import prepare
from gptoss_local.plan.wishes import wishes_from
from gptoss_local.session.history import History
from gptoss_local.tui.app import ChatApp, make_app
from gptoss_local.tui.status import StatusBar
from gptoss_local.tui.widgets import ChatInput, ReplyView

PROMPTS = (
    "Write a short story about a lighthouse keeper.",
    "Now make it a poem.",
    "And a haiku.",
    "One more, about the sea.",
)
END_TOKENS = ("<|return|>", "<|call|>", "<|endoftext|>")


async def _until(pilot: object, condition: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        await pilot.pause(0.02)  # type: ignore[attr-defined]


class FullCollections:
    """Python's full (generation 2) garbage collections that came by themselves (not those of
    `heap.settle`): when each started and how long it took."""

    def __init__(self) -> None:
        self.seen: list[tuple[float, float]] = []
        self._started, self._asked = 0.0, False
        gc.callbacks.append(self._hear)

    def _hear(self, phase: str, info: dict) -> None:
        if info["generation"] != 2:
            return
        if phase == "start":
            self._started = time.monotonic()
            self._asked = _called_from(heap.settle)
        elif not self._asked:
            self.seen.append((self._started, time.monotonic() - self._started))

    def within(self, start: float, end: float) -> list[float]:
        """Milliseconds of each full collection that started between `start` and `end`."""
        return [round(took * 1000, 1) for at, took in self.seen if start <= at <= end]


def _called_from(function: object) -> bool:
    frame = sys._getframe()
    while frame is not None:
        if frame.f_code is function.__code__:  # type: ignore[attr-defined]
            return True
        frame = frame.f_back  # type: ignore[assignment]
    return False


async def drive(app: ChatApp, out: Path, reports: list[tuple[float, float, str]]) -> dict:
    result: dict = {"turns": []}
    collections = FullCollections()
    started = time.monotonic()
    async with app.run_test(size=(150, 35)) as pilot:
        status = app.query_one(StatusBar)
        await _until(pilot, lambda: status.info is not None, 600, "the model to load")
        result["load_seconds"] = round(time.monotonic() - started, 2)
        result["switch_interval"] = sys.getswitchinterval()  # as the running app set it
        backend = app.chat_screen.host.backend
        ban = tuple((backend.tokenize(t)[0], float("-inf")) for t in END_TOKENS)  # type: ignore[union-attr]
        app.chat_screen.generation = replace(app.chat_screen.generation, max_tokens=256)
        backend.options = replace(backend.options, logit_bias=ban)  # type: ignore[union-attr]
        await pilot.pause(2.5)  # one VRAM poll after the load
        for prompt in PROMPTS:
            before = len(app.query(ReplyView))
            box = app.query_one(ChatInput)
            box.text = prompt
            sent = time.monotonic()
            await pilot.press("enter")
            ended = lambda n=before: len(app.query(ReplyView)) > n and not app.chat_screen.busy  # noqa: E731
            await _until(pilot, ended, 300, "the reply")
            replied = time.monotonic()
            await pilot.pause(0.3)
            stats = status.stats
            result["turns"].append({
                "prompt": prompt,
                "ttft_seconds": stats.ttft_seconds if stats else None,
                "decode_tokens_per_second": stats.decode_tokens_per_second if stats else None,
                "context_used": stats.context_used if stats else None,
                "full_collections_ms": collections.within(sent, replied),
                "status_bar": str(status.render()),
            })  # fmt: skip
        (out / "tui.svg").write_text(app.export_screenshot(title="gptoss-local on an H200"))
    result["generation"] = {"backend_sampling": backend.options.backend_sampling}  # type: ignore[union-attr]
    result["load_reports"] = len(reports)
    result["load_fractions_increasing"] = all(a[1] <= b[1] for a, b in itertools.pairwise(reports))
    result["load_phases"] = sorted({what for _, _, what in reports})
    return result


def engine_alone(ready: object, out: Path) -> dict:
    """The four turns on the engine alone, consumed on a worker thread as the app's pump does."""
    import threading

    from gptoss_local.backends.base import GenerationSettings, ReplyRequest
    from gptoss_local.conversation import Conversation, Message
    from gptoss_local.events import AnswerDelta

    backend = ready.open(lambda _f, _w: True)  # type: ignore[attr-defined]
    ban = tuple((backend.tokenize(t)[0], float("-inf")) for t in END_TOKENS)
    backend.options = replace(backend.options, logit_bias=ban)
    settings = GenerationSettings(effort="low", max_tokens=256)
    messages: list[Message] = []
    turns: list[dict] = []

    def one_turn(prompt: str) -> None:
        messages.append(Message("user", prompt))
        reply = backend.stream(ReplyRequest(Conversation(tuple(messages)), settings))
        answer = "".join(e.text for e in reply if isinstance(e, AnswerDelta))
        messages.append(Message("assistant", answer))
        stats = reply.stats
        turns.append({"prompt": prompt, "ttft_seconds": stats.ttft_seconds,
                      "decode_tokens_per_second": stats.decode_tokens_per_second})  # fmt: skip

    try:
        for prompt in PROMPTS:
            worker = threading.Thread(target=one_turn, args=(prompt,))
            worker.start()
            worker.join()
    finally:
        backend.close()
    result = {"turns": turns}
    (out / "engine-alone.json").write_text(json.dumps(result, indent=2))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--context", type=int, default=8192)
    parser.add_argument("--switch-interval", type=float, default=None,
                        help="GIL switch interval in the app (pump.SWITCH_INTERVAL)")  # fmt: skip
    parser.add_argument("--batch-interval", type=float, default=None,
                        help="seconds between UI updates (pump.BATCH_INTERVAL)")  # fmt: skip
    parser.add_argument("--no-settle", action="store_true",
                        help="no heap.settle: collections as Python runs them")  # fmt: skip
    parser.add_argument("--engine-alone", action="store_true",
                        help="the same turns without the app, for comparison")  # fmt: skip
    args = parser.parse_args()
    from gptoss_local.tui import pump

    if args.switch_interval:  # the app sets it while it runs, from pump
        pump.SWITCH_INTERVAL = args.switch_interval
    if args.batch_interval:
        pump.BATCH_INTERVAL = args.batch_interval
    if args.no_settle:
        heap.settle = lambda freeze=False: None  # type: ignore[assignment]
    args.out.mkdir(parents=True, exist_ok=True)
    chat_args = argparse.Namespace(
        model=None, context=args.context, effort="low", backend=None, cpu_moe=None,
        model_path=args.model, cpu_sampling=False,
    )  # fmt: skip
    settings = config.load()
    prepared = prepare(wishes_from(chat_args, settings), settings)
    plan, ready = prepared.plan, prepared.ready
    assert ready is not None  # made ready: nothing asked first
    if args.engine_alone:
        print(json.dumps(engine_alone(ready, args.out), indent=2))
        return
    reports: list[tuple[float, float, str]] = []
    opener = ready.open

    def counting(progress: object) -> object:
        def report(fraction: float, what: str) -> bool:
            reports.append((time.monotonic(), fraction, what))
            return progress(fraction, what)  # type: ignore[operator,no-any-return]

        return opener(report)

    with tempfile.TemporaryDirectory() as folder, History(Path(folder) / "h.sqlite3") as history:
        app = make_app(history, ready=replace(ready, open=counting))  # type: ignore[arg-type]
        try:
            result = asyncio.run(drive(app, args.out, reports))
        finally:
            app.close_backend()
    result["batch_interval"] = pump.BATCH_INTERVAL
    result["heap_settled"] = not args.no_settle
    result["plan"] = {"placement": plan.placement, "context": plan.context,
                      "gpu_layers": plan.gpu_layers}  # fmt: skip
    (args.out / "tui.json").write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
