"""Copying: the code-block parser, and Pilot tests of what reaches the clipboard."""

from __future__ import annotations

from textual.widgets import OptionList
from tui_helpers import (
    AppOn,
    ScriptedBackend,
    close_screen,
    notifications,
    open_screen,
    reply,
    send_and_wait,
    wait_for,
)

from gptoss_local.tui.copying import CodeBlock, CodePickerScreen, code_blocks, count_lines
from gptoss_local.tui.reply_view import ReplyView
from gptoss_local.tui.widgets import ChatInput, UserMessage

ONE_BLOCK = "Use a comprehension:\n\n```python\nsquares = [n * n for n in range(10)]\n```\n"
TWO_BLOCKS = (
    "Install it:\n\n```bash\npip install rich\n```\n\nThen:\n\n"
    "~~~python\nfrom rich import print\nprint('[bold]hi[/]')\n~~~\n"
)


# --- code_blocks --------------------------------------------------------------------------------


def test_code_blocks_of_both_fence_kinds_drop_the_language() -> None:
    assert code_blocks(TWO_BLOCKS) == [
        CodeBlock("pip install rich", "bash"),
        CodeBlock("from rich import print\nprint('[bold]hi[/]')", "python"),
    ]


def test_a_fence_without_language_and_text_without_fences() -> None:
    assert code_blocks("```\nx = 1\n\ny = 2\n```") == [CodeBlock("x = 1\n\ny = 2")]
    assert code_blocks("No code here, only `inline` code.") == []


def test_an_unterminated_fence_runs_to_the_end_while_streaming() -> None:
    assert code_blocks("Here:\n```rust\nfn main() {\n") == [CodeBlock("fn main() {", "rust")]
    assert code_blocks("Here:\n```rust\n") == []  # nothing in it yet


def test_a_longer_fence_holds_a_shorter_one_and_closes_only_on_its_own_length() -> None:
    markdown = "````markdown\n```python\nprint(1)\n```\n````\nafter"
    assert code_blocks(markdown) == [CodeBlock("```python\nprint(1)\n```", "markdown")]


def test_tilde_and_backtick_fences_do_not_close_each_other() -> None:
    assert code_blocks("~~~\na\n```\nb\n~~~") == [CodeBlock("a\n```\nb")]


def test_a_fence_indented_in_a_list_item_loses_that_indentation_only() -> None:
    markdown = "1. Run:\n\n   ```sh\n   make\n     -j8\n   ```\n"
    assert code_blocks(markdown) == [CodeBlock("make\n  -j8", "sh")]


def test_backticks_in_the_info_string_mean_inline_code_not_a_fence() -> None:
    assert code_blocks("``` a ` b\nnot code\n") == []


def test_labels_for_the_picker() -> None:
    assert CodeBlock("\nimport os\nos.sep\n", "python").label() == "python · 3 lines · import os"
    assert CodeBlock("x" * 80).label() == f"text · 1 line · {'x' * 59}…"
    assert count_lines("a\nb\n") == "2 lines"


# --- the app ------------------------------------------------------------------------------------


async def test_f4_copies_the_last_reply_answer_without_its_reasoning(app_on: AppOn) -> None:
    app = app_on(reply("Secret thoughts.", ONE_BLOCK))
    async with app.run_test() as pilot:
        await pilot.press("f4")
        assert "Nothing to copy: no reply has an answer yet." in notifications(app)
        assert app.clipboard == ""
        await send_and_wait(pilot, "Squares?")
        await pilot.press("f4")
        assert app.clipboard == ONE_BLOCK
        assert "Copied the last reply (5 lines)." in notifications(app)
        assert app.query_one(ChatInput).has_focus  # the input keeps the focus


async def test_f5_copies_the_only_code_block_directly(app_on: AppOn) -> None:
    app = app_on(reply("", ONE_BLOCK))
    async with app.run_test() as pilot:
        await send_and_wait(pilot, "Squares?")
        await pilot.press("f5")
        assert app.clipboard == "squares = [n * n for n in range(10)]"
        assert "Copied the python code block (1 line)." in notifications(app)


async def test_f5_with_several_blocks_asks_which_by_number_or_enter(app_on: AppOn) -> None:
    app = app_on(reply("", TWO_BLOCKS))
    screen = app.chat_screen
    async with app.run_test() as pilot:
        await send_and_wait(pilot, "Rich?")
        await open_screen(pilot, "f5", CodePickerScreen)
        options = app.screen.query_one(OptionList)
        assert [str(options.get_option_at_index(i).prompt) for i in range(2)] == [
            "1. bash · 1 line · pip install rich",
            "2. python · 2 lines · from rich import print",
        ]
        await close_screen(pilot, "2", CodePickerScreen)
        assert app.clipboard == "from rich import print\nprint('[bold]hi[/]')"
        await open_screen(pilot, "f5", CodePickerScreen)
        await pilot.press("enter")  # the first is highlighted
        await wait_for(pilot, lambda: not isinstance(app.screen, CodePickerScreen))
        assert app.clipboard == "pip install rich"
        assert screen.state.chat_id is not None  # the sidebar's handler did not see the pick
        await pilot.press("f5", "escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, CodePickerScreen))
        assert app.clipboard == "pip install rich"


async def test_a_reply_without_code_says_so(app_on: AppOn) -> None:
    app = app_on(reply("", "Just **prose**."))
    async with app.run_test() as pilot:
        await send_and_wait(pilot, "Hi")
        await pilot.press("f5")
        assert "No code block in the last reply." in notifications(app)
        assert app.clipboard == ""


async def test_a_focused_earlier_message_is_the_one_copied(app_on: AppOn) -> None:
    backend = ScriptedBackend(reply("", ONE_BLOCK))
    app = app_on(backend)
    async with app.run_test() as pilot:
        await send_and_wait(pilot, "First question")
        backend.script = reply("", "A later answer.")
        await send_and_wait(pilot, "Second question")
        await pilot.press("shift+tab")  # from the input to the newest reply
        views = list(app.query(ReplyView))
        assert views[-1].has_focus_within
        await pilot.press("up", "up")  # newest reply → second question → first reply
        assert views[0].has_focus
        await pilot.press("c")
        assert app.clipboard == ONE_BLOCK and "Copied this reply (5 lines)." in notifications(app)
        await pilot.press("b")
        assert app.clipboard == "squares = [n * n for n in range(10)]"
        await pilot.press("up", "f4")
        assert app.clipboard == "First question"
        assert app.query(UserMessage).first().has_focus
        await pilot.press("down", "down", "down", "down")  # past the newest: back to the input
        assert app.query_one(ChatInput).has_focus


async def test_clicking_a_message_focuses_it_for_copying(app_on: AppOn) -> None:
    app = app_on(reply("", "Short answer."))
    async with app.run_test() as pilot:
        await send_and_wait(pilot, "Question")
        await pilot.click(UserMessage)
        assert app.query_one(UserMessage).has_focus
        await pilot.press("f4")
        assert app.clipboard == "Question" and "Copied your message (1 line)." in notifications(app)
