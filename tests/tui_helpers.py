"""Helpers of the TUI tests: a scripted backend, the app built around it, and Pilot steps that
wait on conditions (never fixed sleeps). The fixtures built on them are in tui_fixtures.py."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Generator, Sequence
from pathlib import Path
from typing import Any

from textual.app import App
from textual.geometry import Region
from textual.pilot import Pilot
from textual.screen import Screen

from gptoss_local.backends.base import (
    BackendInfo,
    Capabilities,
    GenerationSettings,
    Reply,
    ReplyRequest,
    Stats,
    no_tokenizer,
)
from gptoss_local.chat.model_host import Opener
from gptoss_local.conversation import Conversation
from gptoss_local.events import AnswerDelta, Event, ReasoningDelta
from gptoss_local.session.history import History
from gptoss_local.tui.app import ChatApp, make_app
from gptoss_local.tui.widgets import ReplyView

WAIT = "wait"  # in a script: block until `gate` is set (or the reply is cancelled)
Script = Sequence[Event | str | BaseException]
AppOn = Callable[..., ChatApp]  # the `app_on` fixture (tui_fixtures.py)
INFO = BackendInfo("scripted", "gpt-oss-test", "entirely on the GPU", 8192)


class ScriptedBackend:
    """A `Backend` whose replies play a script of events, then end with `stats()`.

    Items may be events, `WAIT`, or an exception to raise. With `delay`, item N is yielded
    N × `delay` seconds after the start (on the worker thread), to play a model of a given
    speed. `cancel` is honoured between items.
    """

    capabilities = Capabilities(prefill=True, tools=True, builtin_tools=True)

    def __init__(self, script: Script, *, delay: float = 0.0) -> None:
        self.script = list(script)
        self.delay = delay
        self.gate = threading.Event()
        self.calls: list[tuple[Conversation, GenerationSettings]] = []
        self.prefills: list[tuple[Conversation, GenerationSettings]] = []
        self.started_at: float | None = None
        self.finished_at: float | None = None
        self.context_used = 100
        self.stop_reason = "return"  # how a reply that is not cancelled ends

    def info(self) -> BackendInfo:
        return INFO

    def stream(self, request: ReplyRequest, cancel: threading.Event | None = None) -> Reply:
        self.calls.append((request.conversation, request.settings))
        return Reply(self._play(cancel or threading.Event()))

    def _play(self, cancel: threading.Event) -> Generator[Event, None, Stats]:
        reason = self.stop_reason
        start = self.started_at = time.monotonic()
        for index, item in enumerate(self.script):
            if cancel.is_set():
                reason = "cancelled"
                break
            if isinstance(item, str):
                while not self.gate.wait(0.005) and not cancel.is_set():
                    pass
                continue
            if isinstance(item, BaseException):
                raise item
            ahead = start + index * self.delay - time.monotonic()
            if ahead > 0:  # paced against the start, so the rate holds despite coarse sleeps
                time.sleep(ahead)
            yield item
        self.finished_at = time.monotonic()
        return self.stats(reason)

    def prefill(self, request: ReplyRequest, cancel: threading.Event | None = None) -> int:
        self.prefills.append((request.conversation, request.settings))
        return 0

    def keep_conversations(self, max_bytes: int) -> None:
        pass

    def count_prompt(self, request: ReplyRequest) -> int:
        raise no_tokenizer("scripted")  # declared: the chat estimates

    def tokenize(self, text: str, special: bool = True) -> list[int]:
        raise no_tokenizer("scripted")

    def stats(self, reason: str) -> Stats:
        """The stats of a reply that ended for `reason`."""
        return Stats(
            generated_tokens=len(self.script),
            ttft_seconds=0.12,
            decode_tokens_per_second=250.0,
            stop_reason=reason,  # type: ignore[arg-type]
            context_size=8192,
            context_used=self.context_used,
        )

    def close(self) -> None:
        pass


def reply(reasoning: str, answer: str) -> Script:
    """A script of one reasoning delta and one answer delta."""
    return [ReasoningDelta(reasoning), AnswerDelta(answer)]


def open_history(tmp_path: Path) -> History:
    """A fresh history in the test's folder."""
    return History(tmp_path / "history.sqlite3")


def scripted_app(
    history: History, backend: ScriptedBackend | Script | Opener | None = None, **options: object
) -> ChatApp:
    """The app on `history` talking to `backend`: a ScriptedBackend, the script of one, or an
    opener that makes the backend when the app loads it (None where `ready` or `setup` give it).

    The machine has no GPU unless `vram` says otherwise (a real GPU's live VRAM would change the
    status bar from run to run); `options` go to `make_app`.
    """
    from fake_nvml import FakeNvml

    from gptoss_local.hardware.vram import VramMonitor

    if isinstance(backend, Sequence):
        backend = ScriptedBackend(backend)
    if isinstance(backend, ScriptedBackend):
        backend = _opener(backend)
    options.setdefault("vram", VramMonitor(FakeNvml([])))
    return make_app(history, backend, **options)  # type: ignore[arg-type]


def _opener(backend: ScriptedBackend) -> Opener:
    """An opener that hands the app `backend` (already "loaded")."""

    def opens(_progress: object) -> ScriptedBackend:
        return backend

    return opens  # type: ignore[return-value]


async def wait_for(
    pilot: Pilot, condition: Callable[[], bool], timeout: float = 10.0, what: str = ""
) -> None:
    """Let the app run until `condition()` holds; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or condition}")
        await pilot.pause(0.01)


async def open_screen(pilot: Pilot, key: str, screen: type[Screen[Any]]) -> None:
    """Press `key`, then wait until the app shows a `screen` (a modal, the help, the palette)."""
    await pilot.press(key)
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, screen), what=screen.__name__)


async def close_screen(pilot: Pilot, key: str, screen: type[Screen[Any]]) -> None:
    """Press `key`, then wait until the app no longer shows a `screen`."""
    await pilot.press(key)
    await wait_for(pilot, lambda: not isinstance(pilot.app.screen, screen), what="closing")


async def send(pilot: Pilot, text: str) -> None:
    """Type `text` into the input and press Enter."""
    from gptoss_local.tui.widgets import ChatInput

    box = pilot.app.query_one(ChatInput)
    box.focus()
    box.text = text
    await pilot.press("enter")


async def send_and_wait(pilot: Pilot, text: str, timeout: float = 10.0) -> None:
    """Send `text` and wait until the reply has ended."""
    app = pilot.app
    screen = app.chat_screen
    assert isinstance(app, ChatApp)
    before = len(app.query(ReplyView))
    await send(pilot, text)
    await wait_for(
        pilot,
        lambda: len(app.query(ReplyView)) > before and not screen.busy,
        timeout,
        "the reply to end",
    )
    await pilot.pause()


async def send_until_answer(pilot: Pilot, text: str, answer: str) -> ReplyView:
    """Send `text`, then wait until its reply's answer reads `answer` (a script that waits
    there keeps the reply running); returns the reply's view."""
    app = pilot.app
    await send(pilot, text)
    await wait_for(pilot, lambda: bool(app.query(ReplyView)), what="the reply")
    view = app.query_one(ReplyView)
    await wait_for(pilot, lambda: view.answer_text == answer, what=f"the answer {answer!r}")
    return view


async def wait_for_model(pilot: Pilot, timeout: float = 60.0) -> None:
    """Wait until the backend has loaded (the status bar names the model), so a chat created by
    the next message records which model and backend it uses."""
    from gptoss_local.tui.status import StatusBar

    app = pilot.app
    await wait_for(pilot, lambda: app.query_one(StatusBar).info is not None, timeout, "the model")


def screen_lines(app: App[Any], region: Region | None = None) -> list[str]:
    """The text the terminal shows, one string per row: the whole screen (a modal over the
    screen under it), or only `region` of it (a widget's `content_region`, say)."""
    lines = [strip.text for strip in app.screen._compositor.render_strips()]
    if region is None:
        return lines
    return [line[region.x : region.right] for line in lines[region.y : region.bottom]]


def notifications(app: ChatApp) -> list[str]:
    """The text of every notification shown so far."""
    return [n.message for n in app._notifications]


SNAPSHOTS = Path(__file__).parent / "snapshots" / "tui"
SNAPSHOT_SIZE = (100, 30)


def normalise_svg(svg: str) -> str:
    """The SVG without what changes from run to run: Rich names its CSS classes by a hash."""
    import re

    return re.sub(r"terminal-\d+", "terminal", svg)


async def _settled_screenshot(pilot: Pilot, name: str, attempts: int = 50) -> str:
    """A screenshot once two in a row agree: a loaded machine can still be laying out or
    scrolling when the first one is taken."""
    previous = None
    for _ in range(attempts):
        await pilot.pause()
        await pilot.wait_for_scheduled_animations()
        await pilot.pause(0.02)
        svg = normalise_svg(pilot.app.export_screenshot(title=name))
        if svg == previous:
            return svg
        previous = svg
    raise AssertionError(f"the screen kept changing: no stable picture for {name}")


async def assert_snapshot(pilot: Pilot, name: str) -> None:
    """Compare the screen with `snapshots/tui/<name>.svg`; `UPDATE_SNAPSHOTS=1` rewrites it.

    The cursor is made steady first (a blink would make the picture depend on timing), and
    notifications are cleared (they time out at unpredictable moments).
    """
    import os

    from textual.widgets import TextArea

    app = pilot.app
    for area in app.query(TextArea):
        area.cursor_blink = False
    app.clear_notifications()
    svg = await _settled_screenshot(pilot, name)
    path = SNAPSHOTS / f"{name}.svg"
    if os.environ.get("UPDATE_SNAPSHOTS") == "1" or not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(svg, encoding="utf-8")
        if os.environ.get("UPDATE_SNAPSHOTS") != "1":
            raise AssertionError(f"{path} did not exist: written, check it and run again")
        return
    if path.read_text(encoding="utf-8") != svg:
        import tempfile

        failed = Path(tempfile.gettempdir()) / f"{name}.failed.svg"  # kept out of the tree
        failed.write_text(svg, encoding="utf-8")
        raise AssertionError(f"the screen differs from {path}: see {failed}")
