"""Does the chat UI keep up with a fast model? A scripted backend streams at fixed rates.

For each rate (500, 2,000 and 10,000 tokens/s by default), in one process, one after another:
the time from the backend's last token to the first frame drawn after the final Markdown
update, the frames the UI drew per second while the stream ran, and the `ReplyStreamed`
batches it handled per second. Target: the UI done within 0.5 s of the backend at 2,000 tok/s.
Run `python bench/tui_stream.py [--seconds S] [--out FILE]` from a checkout.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # the scripted backend lives with the UI tests
sys.path.insert(0, str(ROOT))

from tui_helpers import ScriptedBackend, open_history, wait_for  # noqa: E402

from gptoss_local.backends.base import GenerationSettings  # noqa: E402
from gptoss_local.chat.chat_state import ChatState  # noqa: E402
from gptoss_local.chat.services import ChatServices  # noqa: E402
from gptoss_local.events import AnswerDelta, Event, ReasoningDelta  # noqa: E402
from gptoss_local.hardware.vram import VramMonitor  # noqa: E402
from gptoss_local.tui.app import ChatApp  # noqa: E402
from gptoss_local.tui.messages import ReplyFinished, ReplyStreamed  # noqa: E402

SIZE = (120, 40)
TARGET_LAG = 0.5


class MeteredApp(ChatApp):
    """The chat app, noting when it draws a frame and when it handles stream messages."""

    CSS_PATH = str(ROOT / "gptoss_local" / "tui" / "app.tcss")  # relative paths follow the class
    frames: list[float]
    batches: list[float]
    ui_done: float | None = None
    rendered_at: float | None = None

    def _display(self, screen: object, renderable: object) -> None:  # type: ignore[override]
        # Headless runs still composite every frame; only the write to the terminal is skipped.
        if renderable is not None:
            now = time.monotonic()
            self.frames.append(now)
            if self.ui_done is not None and self.rendered_at is None:
                self.rendered_at = now
        super()._display(screen, renderable)  # type: ignore[arg-type]

    # The chat screen handles these messages first; then they bubble up to the app.
    def on_reply_streamed(self, message: ReplyStreamed) -> None:
        self.batches.append(time.monotonic())

    def on_reply_finished(self, message: ReplyFinished) -> None:
        self.ui_done = time.monotonic()  # the final Markdown update has been applied
        self.refresh()  # make sure a frame follows even if nothing else is dirty


def script(tokens: int) -> list[Event | str | BaseException]:
    """A reply of `tokens` deltas: a fifth reasoning, then Markdown with paragraphs and code."""
    thinking = tokens // 5
    items: list[Event | str | BaseException] = [
        ReasoningDelta(f"step {i} ") for i in range(thinking)
    ]
    for i in range(tokens - thinking):
        if i % 400 == 200:
            text = "\n\n```python\nprint('hello')\n```\n\n"
        elif i % 60 == 59:
            text = "end.\n\n"
        else:
            text = f"word{i} " if i % 7 else f"**bold{i}** "
        items.append(AnswerDelta(text))
    return items


async def measure(rate: int, seconds: float) -> dict[str, float]:
    """Stream `rate × seconds` tokens at `rate` tokens/s through the app; time the UI."""
    with tempfile.TemporaryDirectory(prefix="gptoss-bench-") as folder:
        os.environ["GPTOSS_LOCAL_HOME"] = folder
        history = open_history(Path(folder))
        backend = ScriptedBackend(script(int(rate * seconds)), delay=1 / rate)
        services = ChatServices(
            history, ChatState(history, None, "medium"), GenerationSettings(),
            lambda _progress: backend, vram=VramMonitor(),
        )  # fmt: skip
        app = MeteredApp(services)
        app.frames, app.batches = [], []
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("h", "i")
            started = time.monotonic()
            await pilot.press("enter")
            await wait_for(pilot, lambda: app.rendered_at is not None, seconds * 5 + 30)
        history.close()
    end = backend.finished_at or 0.0
    stream_time = end - started
    during = [t for t in app.frames if started <= t <= end]
    return {
        "rate": rate,
        "tokens": len(backend.script),
        "achieved": len(backend.script) / stream_time,
        "lag": (app.rendered_at or 0.0) - end,
        "fps": len(during) / stream_time,
        "batches": len([t for t in app.batches if t <= end]) / stream_time,
    }


def report(rows: list[dict[str, float]], command: str) -> str:
    """The table of results, with the command and the machine."""
    import textual

    lines = [
        f"command: {command}",
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"{platform.system()}; Python {platform.python_version()}, Textual {textual.__version__}; "
        f"headless {SIZE[0]}x{SIZE[1]}",
        f"{'tok/s asked':>11} {'achieved':>9} {'tokens':>7} {'UI lag s':>9} "
        f"{'frames/s':>9} {'batches/s':>10}",
    ]
    for row in rows:
        lines.append(
            f"{row['rate']:11,.0f} {row['achieved']:9,.0f} {row['tokens']:7,.0f} "
            f"{row['lag']:9.3f} {row['fps']:9.1f} {row['batches']:10.1f}"
        )
    at_2000 = [row for row in rows if row["rate"] == 2000]
    if at_2000:
        ok = at_2000[0]["lag"] <= TARGET_LAG
        lines.append(f"UI done within {TARGET_LAG} s of the backend at 2,000 tok/s: "
                     f"{'yes' if ok else 'NO'}")  # fmt: skip
    lines.append(
        "UI lag: backend's last token → first frame after the final Markdown update. "
        "frames/s: composited frames while streaming. batches/s: ReplyStreamed handled."
    )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=3.0, help="length of each stream")
    parser.add_argument("--rates", type=int, nargs="+", default=[500, 2000, 10000])
    parser.add_argument("--out", type=Path, help="also write the report to this file")
    args = parser.parse_args()
    rows = [asyncio.run(measure(rate, args.seconds)) for rate in args.rates]
    command = "python bench/tui_stream.py " + " ".join(sys.argv[1:])
    text = report(rows, command.strip())
    sys.stdout.write(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
