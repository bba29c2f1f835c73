"""Whom a reply waits for on a shared engine: while the chat's request has no token yet, the
engine's state (`ENGINE_PATH`, as `ps` reads it) is asked now and then, and when the request
waits behind another program's reply, the chat hears that program's name (and "" once it is
the chat's turn). An engine of this process, or a server not ours, has no queue to tell."""

from __future__ import annotations

import threading
from collections.abc import Callable
from types import TracebackType

from gptoss_local.backends.base import Backend, Queued

POLL_SECONDS = 0.25


class QueueWatch:
    """While entered (and until `stop`), tells `tell` whom the reply waits for.

    Args:
        backend: The chat's backend; only a client of a shared engine (`Queued`) has a queue
            to watch.
        tell: Hears the name of the client ahead (on the watch's thread), "" when none is.
    """

    def __init__(self, backend: Backend, tell: Callable[[str], object]) -> None:
        self._queued = backend if isinstance(backend, Queued) else None
        self._tell = tell
        self._done = threading.Event()
        self._told = ""
        self._thread: threading.Thread | None = None

    def __enter__(self) -> QueueWatch:
        if self._queued is not None:
            self._thread = threading.Thread(target=self._watch, name="queue-watch", daemon=True)
            self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def stop(self) -> None:
        """The reply's first token came (or it ended): no more waiting to tell."""
        if self._done.is_set():
            return
        self._done.set()
        if self._thread is not None:
            self._thread.join()
        if self._told:
            self._told = ""
            self._tell("")

    def _watch(self) -> None:
        assert self._queued is not None
        while not self._done.wait(POLL_SECONDS):
            ahead = self._queued.waiting_for() or ""
            if ahead != self._told and not self._done.is_set():
                self._told = ahead
                self._tell(ahead)
