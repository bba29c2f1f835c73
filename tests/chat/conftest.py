"""The chat services' tests: plain Python, no Textual; a history where one is needed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from gptoss_local.session.history import History


@pytest.fixture
def history(tmp_path: Path) -> Iterator[History]:
    """A fresh history in the test's folder, closed after the test."""
    with History(tmp_path / "history.sqlite3") as opened:
        yield opened
