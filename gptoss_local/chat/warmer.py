"""Prefilling the model's cache while the user reads or types, so the next reply starts sooner.

Whenever the chat settles (the model loaded, a reply ended, another chat opened, the effort or
instructions changed) the UI asks the backend to evaluate what the next prompt will start with
(`Backend.prefill`) on another thread. Sending stops it between batches; what it evaluated is
kept, so the reply has only the new message left to read (measured on a CPU: bench/RESULTS.md).
On a GPU it is also meant to take llama.cpp's first-decode cost out of the first reply after a
load; that part is not measured yet.
"""

from __future__ import annotations

import contextlib
import threading

from gptoss_local.backends.base import Backend, ReplyRequest
from gptoss_local.chat.threads import RunInThread, start_thread


class PrefillWarmer:
    """At most one prefill at a time: starting one stops the one before.

    Call `start` and `stop` from one thread (the UI's); the prefill runs on another.

    Args:
        run_in_thread: Starts the prefill on another thread (the TUI passes a thread worker).
    """

    def __init__(self, run_in_thread: RunInThread = start_thread) -> None:
        self._run = run_in_thread
        self._cancel: threading.Event | None = None

    @property
    def running(self) -> bool:
        """Whether a prefill was started and not stopped (it may have finished already)."""
        return self._cancel is not None

    def start(self, backend: Backend, request: ReplyRequest) -> threading.Event:
        """Stop any prefill, then prefill the prompt `request` starts with (made as the next
        reply's: `chat.next_reply`); its cancel event."""
        self.stop()
        cancel = self._cancel = threading.Event()
        if backend.capabilities.prefill:  # an engine that cannot evaluate ahead is left alone
            self._run(lambda: prefill(backend, request, cancel))
        return cancel

    def stop(self) -> None:
        """Stop the prefill in progress (at its next batch); what it evaluated stays cached."""
        if self._cancel is not None:
            self._cancel.set()
            self._cancel = None


def prefill(backend: Backend, request: ReplyRequest, cancel: threading.Event) -> None:
    """Run one prefill; a failure is dropped, as nothing is lost: the reply evaluates its prompt
    itself and reports what goes wrong. One stopped before it began does not touch the cache."""
    if cancel.is_set():
        return
    with contextlib.suppress(Exception):  # a failed prefill costs only the time it saved
        backend.prefill(request, cancel)
