"""The app tests' fixtures: a chat history in the test's folder, and the app built on it around a
scripted backend or an opener. A folder's conftest.py imports them (tests/tui, tests/first_run)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tui_helpers import AppOn, open_history, scripted_app

from gptoss_local.session.history import History
from gptoss_local.tui.app import ChatApp

__all__ = ["fixture_app_on", "fixture_history"]


@pytest.fixture(name="history")
def fixture_history(tmp_path: Path) -> Iterator[History]:
    """A fresh history in the test's folder, closed after the test."""
    opened = open_history(tmp_path)
    yield opened
    opened.close()


@pytest.fixture(name="app_on")
def fixture_app_on(history: History) -> AppOn:
    """`app_on(backend, **options)`: the app on `history`, talking to a ScriptedBackend, the
    script of one, or an opener; no GPU unless `vram=` says otherwise (`scripted_app`)."""

    def build(backend: object = None, **options: object) -> ChatApp:
        return scripted_app(history, backend, **options)  # type: ignore[arg-type]

    return build
