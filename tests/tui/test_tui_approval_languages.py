"""The approval dialog in Chinese and Portuguese: every button shows the key that presses it
before its translated label, whole, inside an 80x24 terminal, and the letter keys answer in
every language."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from rich.cells import cell_len
from textual.app import App
from textual.widgets import Button
from tui_helpers import screen_lines

from gptoss_local import i18n
from gptoss_local.events import ToolCall
from gptoss_local.tools import ToolInfo
from gptoss_local.tui.approval import ApprovalScreen

CALL = ToolCall(name="add", arguments={"a": 2, "b": 3}, raw='{"a": 2, "b": 3}')
TOOL = ToolInfo(name="add", kind="function", description="Adds two numbers.", source="test")


@pytest.fixture(params=["zh_CN", "pt_BR"])
def language(request: pytest.FixtureRequest) -> Iterator[str]:
    """The catalog of the parameter for this test only; English again after it."""
    i18n.set_language(request.param)
    yield request.param
    i18n.set_language("en")


class DialogApp(App[None]):
    """Shows the dialog at once and keeps its answer."""

    def __init__(self) -> None:
        super().__init__()
        self.answer: str | None = None

    def on_mount(self) -> None:
        self.push_screen(ApprovalScreen(CALL, TOOL), self._answered)

    def _answered(self, answer: str | None) -> None:
        self.answer = answer


@pytest.mark.parametrize(("key", "answer"), [("o", "once"), ("a", "always"), ("d", "deny")])
async def test_the_buttons_show_their_keys_and_the_letters_answer(
    language: str, key: str, answer: str
) -> None:
    app = DialogApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        buttons = {b.id: b for b in app.screen.query(Button)}
        screen = screen_lines(app)
        expected = {
            "once": ("(o) ", i18n._("Allow once")),
            "always": ("(a) ", i18n._("Always for this chat")),
            "deny": ("(d, Esc) ", i18n._("Deny")),
        }
        for name, (keys, label) in expected.items():
            button = buttons[name]
            shown = str(button.label)
            assert keys.strip() in shown and label in shown, (language, shown)
            assert label not in ("Allow once", "Always for this chat", "Deny"), "untranslated"
            region = button.region
            assert region.x >= 0 and region.right <= 80 and region.bottom <= 24, (name, region)
            assert cell_len(shown) <= button.content_region.width, (name, shown)  # not cut
            assert any(shown in line for line in screen), (name, shown)
        await pilot.press(key)
        await pilot.pause()
        assert app.answer == answer
