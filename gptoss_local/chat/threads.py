"""How a service starts work on another thread: the TUI passes its thread workers, tests and
scripts get a plain daemon thread."""

from __future__ import annotations

import threading
from collections.abc import Callable

Work = Callable[[], None]
RunInThread = Callable[[Work], object]


def start_thread(work: Work) -> threading.Thread:
    """Run `work` on a new daemon thread (a process at exit does not wait for it)."""
    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    return thread
