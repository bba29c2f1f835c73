"""SVG snapshots of the key screens, compared with tests/snapshots/tui/ (UPDATE_SNAPSHOTS=1).

Each test fixes what would otherwise vary: the terminal size, the cursor blink, and the
"Thought for Ns" clock text.
"""

from __future__ import annotations

from textual.pilot import Pilot
from tui_helpers import (
    SNAPSHOT_SIZE,
    AppOn,
    ScriptedBackend,
    assert_snapshot,
    send_and_wait,
    wait_for,
)

from gptoss_local.events import AnswerDelta, ReasoningDelta
from gptoss_local.session.history import History
from gptoss_local.tui.reply_view import ReplyView

ANSWER = "Use a **list comprehension**:\n\n```python\nsquares = [n * n for n in range(10)]\n```\n"
SCRIPT = [
    ReasoningDelta("The user wants squares. A comprehension is the idiomatic answer."),
    AnswerDelta(ANSWER),
]


async def _one_reply(pilot: Pilot) -> None:
    await send_and_wait(pilot, "How do I square numbers in Python?")
    for view in pilot.app.query(ReplyView):
        view.reasoning_box.title = "Thought for 2s"  # the real one depends on timing


async def test_snapshot_chat_with_reasoning_collapsed(app_on: AppOn) -> None:
    app = app_on(SCRIPT)
    async with app.run_test(size=SNAPSHOT_SIZE) as pilot:
        await _one_reply(pilot)
        await assert_snapshot(pilot, "chat_reasoning_collapsed")


async def test_snapshot_chat_with_reasoning_expanded(app_on: AppOn) -> None:
    app = app_on(SCRIPT)
    async with app.run_test(size=SNAPSHOT_SIZE) as pilot:
        await _one_reply(pilot)
        await pilot.press("ctrl+t")
        await assert_snapshot(pilot, "chat_reasoning_expanded")


async def test_snapshot_status_bar_near_the_context_limit(app_on: AppOn) -> None:
    backend = ScriptedBackend(SCRIPT)
    backend.context_used = 7900
    app = app_on(backend)
    # Tall enough that the chat does not scroll: a busy machine may leave a scroll anywhere.
    async with app.run_test(size=(140, 30)) as pilot:
        await _one_reply(pilot)
        await assert_snapshot(pilot, "status_bar_warning")


async def test_snapshot_sidebar_open(history: History, app_on: AppOn) -> None:
    for title in ("Squares in Python", "A haiku about GPUs", "Plan a trip to Lisbon"):
        chat = history.create_chat().id
        history.add_user_message(chat, title)
    app = app_on(SCRIPT)
    async with app.run_test(size=SNAPSHOT_SIZE) as pilot:
        await pilot.press("ctrl+b")
        await wait_for(pilot, lambda: app.query_one("#sidebar").display, what="the sidebar")
        await assert_snapshot(pilot, "sidebar_open")
