"""Prefilling the model's cache while the user reads or types, so the next reply starts sooner.

A mixin of `ChatApp`. Whenever the chat settles (the model loaded, a reply ended, another chat
opened, the effort or instructions changed) a thread worker asks the backend to evaluate what
the next prompt will start with (`Backend.prefill`). Sending cancels it between batches; what
it evaluated is kept, so the reply has only the new message left to read (measured on a CPU:
bench/RESULTS.md). On a GPU it is also meant to take llama.cpp's first-decode cost out of the
first reply after a load; that part is not measured yet.
"""

from __future__ import annotations

import contextlib
import threading
from typing import TYPE_CHECKING

from gptoss_local.backends.base import Backend, BackendError, Conversation, GenerationSettings
from gptoss_local.session.errors import HistoryError
from gptoss_local.tui.pump import with_effort

if TYPE_CHECKING:
    from textual.app import App

    from gptoss_local.session.history import History

    _Base = App[None]
else:
    _Base = object


class Warming(_Base):
    """`ChatApp.__init__` sets the attributes declared here."""

    history: History
    generation: GenerationSettings
    effort: str
    chat_id: int | None
    instructions: str
    _backend: Backend | None
    _warm_cancel: threading.Event | None

    @property
    def busy(self) -> bool:
        """Whether a reply is being written (the app overrides this)."""
        raise NotImplementedError

    def warm_up(self) -> None:
        """Prefill the open chat's next prompt on a worker; only with a loaded model and no
        reply running (it never triggers a load)."""
        backend = self._backend
        if backend is None or self.busy:
            return
        self.stop_warming()
        try:
            conversation = self._next_conversation()
        except HistoryError:  # the reply will say what is wrong with the history
            return
        settings = with_effort(self.generation, self.effort)
        cancel = self._warm_cancel = threading.Event()
        self.run_worker(lambda: _prefill(backend, conversation, settings, cancel),
                        thread=True, group="warm", exit_on_error=False)  # fmt: skip

    def stop_warming(self) -> None:
        """Stop a prefill in progress (at its next batch); what it evaluated stays cached."""
        if self._warm_cancel is not None:
            self._warm_cancel.set()
            self._warm_cancel = None

    def _next_conversation(self) -> Conversation:
        if self.chat_id is None:  # a new chat: the system message and the instructions
            return Conversation((), self.instructions or None)
        return self.history.to_conversation(self.chat_id)


def _prefill(
    backend: Backend,
    conversation: Conversation,
    settings: GenerationSettings,
    cancel: threading.Event,
) -> None:
    # Nothing is lost on a failure: the reply evaluates its prompt itself and reports it.
    with contextlib.suppress(BackendError):
        backend.prefill(conversation, settings, cancel)
