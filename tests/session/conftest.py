"""The session tests' history: a fresh file in the test's folder, on fake clocks."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from session_helpers import open_history

from gptoss_local.session.history import History


@pytest.fixture
def history(tmp_path: Path) -> Iterator[History]:
    """`tmp_path/h.sqlite3` with a fake buffer clock and a ticking wall clock; closed after."""
    opened, _ = open_history(tmp_path / "h.sqlite3")
    yield opened
    opened.close()
