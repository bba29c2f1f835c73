"""The set-up (first-run) screen in Chinese and Portuguese at 80x24, the smallest terminal
served: every heading, choice title, choice and button is whole on the screen, measured in
terminal cells (a CJK character takes two), none cut with "…"."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from first_run_helpers import setup_for
from rich.cells import cell_len
from textual.widgets import Button, Label, Select, Static
from tui_helpers import AppOn, screen_lines, wait_for

from gptoss_local import i18n
from gptoss_local.catalog import Catalog
from gptoss_local.tui.first_run import FirstRunScreen
from gptoss_local.tui.widgets import ScrollWhenNeeded

SIZE = (80, 24)


@pytest.fixture(params=["zh_CN", "pt_BR"])
def language(request: pytest.FixtureRequest) -> Iterator[str]:
    """The catalog of the parameter for this test only; English again after it."""
    i18n.set_language(request.param)
    yield request.param
    i18n.set_language("en")


def _whole(widget: Label | Button | Static, words: str) -> None:
    """`words` fit the widget's content on one line, and the widget lies inside the screen."""
    screen = widget.screen.region
    assert screen.contains_region(widget.region), (words, widget.region)
    assert cell_len(words) <= widget.content_region.width, (words, widget.content_region)


async def test_the_set_up_screen_fits_80x24(language: str, app_on: AppOn, cat: Catalog) -> None:
    app = app_on(setup=setup_for(cat))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, FirstRunScreen), what="set-up")
        await pilot.pause()
        screen = app.screen
        assert i18n._("Welcome to gptoss-local") in screen_lines(app)[1]
        buttons = [b for b in screen.query(Button) if b.display]
        assert [b.id for b in buttons] == ["start", "quit"]
        for button in buttons:
            _whole(button, str(button.label))
            assert str(button.label) in "\n".join(screen_lines(app)), button.id
        facts = screen.query_one(ScrollWhenNeeded)
        seen: list[str] = []
        for select in screen.query(Select):  # scrolled into view one by one
            facts.scroll_to_widget(select, animate=False)
            await pilot.pause()
            title = select.parent.query_one(Label) if select.parent else None
            assert title is not None
            _whole(title, str(title.render()))
            shown = select.query_one("#label", Static)
            chosen = str(shown.render())
            assert "…" not in chosen and cell_len(chosen) <= shown.content_region.width, chosen
            seen += screen_lines(app)
        for heading in screen.query(".heading"):
            facts.scroll_to_widget(heading, animate=False)
            await pilot.pause()
            words = str(heading.render())
            assert any(words in line for line in screen_lines(app)), words
        assert not [line for line in seen if "…" in line]
