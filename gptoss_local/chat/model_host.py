"""The chat's model: made by its opener on first use, kept until it is switched or closed.

The backend is created once, under a lock, by whichever thread needs it first (the load worker,
or a reply worker if the user sent before loading finished), so a model is never loaded twice
nor freed while another thread makes it. Every method that may load blocks: the UI calls them on
thread workers and hears about the load through `LoadReports`, called on the loading thread.

After a failed load a message the user sends is held (`hold`) rather than saved with one more
failed reply; it is sent once a new attempt has loaded the model. Closing makes the progress
callback answer "stop", so llama.cpp abandons a load still running.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from gptoss_local.backends.base import Backend, BackendError, LoadProgress, Queued
from gptoss_local.i18n import _
from gptoss_local.launch.engines import Opener

# Makes the backend, reporting progress as it goes (`launch.engines.Ready.open` is one).
Hold = Literal["send", "retry", "wait"]


def _keep_going(_fraction: float, _what: str) -> bool:
    return True


def _ignore(_value: object) -> None:
    return None


@dataclass(frozen=True)
class LoadReports:
    """What `ModelHost` tells the UI about a load; each is called on the loading thread.

    Attributes:
        started: A load of the named model begins.
        progress: (fraction done, what is happening), thinned out (`ProgressThrottle`);
            False stops the load.
        failed: The load failed with this error (not called while closing).
        loaded: The backend is ready (not called while closing).
    """

    started: Callable[[str], object] = _ignore
    progress: LoadProgress = _keep_going
    failed: Callable[[Exception], object] = _ignore
    loaded: Callable[[Backend], object] = _ignore


@dataclass(frozen=True)
class Held:
    """A message sent while the model was not loaded: for which chat (and edit) it was meant."""

    chat_id: int | None
    editing: int | None
    text: str


class ProgressThrottle:
    """Lets through only load reports that differ enough from the last one let through: llama.cpp
    reports per tensor, hundreds of calls for one percent, which would flood the UI."""

    MIN_STEP = 0.01
    MIN_INTERVAL = 0.1  # seconds

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.reset()

    def reset(self) -> None:
        """A new load begins: its first report goes through."""
        self._last = (-1.0, "", float("-inf"))

    def wants(self, fraction: float, what: str) -> bool:
        """Whether this report is worth showing: another step, a step of at least `MIN_STEP`
        after `MIN_INTERVAL`, or the end."""
        last_fraction, last_what, last_at = self._last
        now = self._clock()
        small = fraction - last_fraction < self.MIN_STEP or now - last_at < self.MIN_INTERVAL
        if what == last_what and small and fraction < 1.0:
            return False
        self._last = (fraction, what, now)
        return True


@dataclass
class _LoadState:
    failed: bool = False  # the last load failed and nothing is loaded
    held: Held | None = None  # a message waiting for the load that is running
    lock: threading.Lock = field(default_factory=threading.Lock)


class ModelHost:
    """Owns the opener, the backend and the lock around both.

    Args:
        opener: Makes the backend; None until the first-run screen has chosen one.
        model_name: What the banner calls the model while it loads (None: "the model").
        reports: Where loads are reported (the UI's callbacks).
    """

    def __init__(
        self,
        opener: Opener | None,
        model_name: str | None = None,
        reports: LoadReports | None = None,
    ) -> None:
        self.model_name = model_name if model_name is not None else _("the model")
        self.reports = reports or LoadReports()
        self._opener = opener
        self._backend: Backend | None = None
        self._lock = threading.Lock()  # held while the backend is made, switched or closed
        self._closing = threading.Event()
        self._state = _LoadState()
        self._throttle = ProgressThrottle()

    @property
    def backend(self) -> Backend | None:
        """The loaded backend, if any, without waiting for a load."""
        return self._backend

    @property
    def chosen(self) -> bool:
        """Whether there is an opener (else the first-run screen has not finished)."""
        return self._opener is not None

    @property
    def closing(self) -> bool:
        """Whether `close` was called: nothing is loaded or reported any more."""
        return self._closing.is_set()

    @property
    def held(self) -> Held | None:
        """The message waiting for the load that is running, if any."""
        return self._state.held

    def choose(self, opener: Opener, model_name: str) -> None:
        """Take the opener chosen on the first-run screen (nothing is loaded yet)."""
        with self._lock:
            self._opener, self.model_name = opener, model_name

    def get(self) -> Backend:
        """The backend, made by the opener first if need be (slow: call it on a worker thread).

        Raises:
            BackendError: No opener yet, or the host is closing; else what the opener raised.
        """
        with self._lock:
            if self._closing.is_set():
                raise BackendError(_("the chat is closing: the model is not loaded"))
            if isinstance(self._backend, Queued) and not self._backend.engine_alive():
                self._backend = None  # the shared engine ended: the opener finds or starts one
            if self._backend is None:
                self._backend = self._open()
            return self._backend

    def load(self) -> Exception | None:
        """Load now unless loaded (blocking); the failure, already reported, for the caller to
        announce too (None when it worked, or when closing made it fail)."""
        try:
            self.get()
        except Exception as exc:  # reported through `failed`; the next send tries again
            return None if self.closing else exc
        return None

    def switch_to(self, opener: Opener, model_name: str) -> Exception | None:
        """Close the loaded model, then load another with `opener` (blocking), as `load`."""
        with self._lock:  # the old model goes before the new one takes its memory
            old, self._backend = self._backend, None
            self._opener, self.model_name = opener, model_name
            with self._state.lock:
                self._state.failed = False
            if old is not None:
                old.close()
        return self.load()

    def hold(self, held: Held) -> Hold:
        """Whether a message sent now should wait for the model.

        Returns:
            "send" when the last load did not fail (a reply waits for a running load itself);
            "retry" after a failed load: `held` waits, and the caller starts a new load;
            "wait" when a retry is running already: `held` replaces the message waiting.
        """
        state = self._state
        with state.lock:
            if state.held is not None:
                state.held = held
                return "wait"
            if not state.failed:
                return "send"
            state.held, state.failed = held, False
            return "retry"

    def take_held(self) -> Held | None:
        """The message that waited for this load (once), now that the model is ready."""
        with self._state.lock:
            held, self._state.held = self._state.held, None
        return held

    def close(self) -> None:
        """Free the model; a load still running is told to stop (its progress callback says so)
        and this waits for it. Nothing is loaded afterwards."""
        self._closing.set()
        with self._lock:
            if self._backend is not None:
                self._backend.close()
                self._backend = None

    def _open(self) -> Backend:
        """Make the backend (with `_lock` held) and report how it went."""
        if self._opener is None:
            raise BackendError(_("no model is chosen yet: finish the first-run screen"))
        self.reports.started(self.model_name)
        self._throttle.reset()
        try:
            backend = self._opener(self._progress)
        except Exception as exc:  # the UI says why until the next attempt
            with self._state.lock:
                self._state.failed, self._state.held = True, None
            if not self.closing:
                self.reports.failed(exc)
            raise
        with self._state.lock:
            self._state.failed = False
        if not self.closing:
            self.reports.loaded(backend)
        return backend

    def _progress(self, fraction: float, what: str) -> bool:
        """The opener's progress callback: False once closing, else what the UI answers (to a
        report worth showing)."""
        if self.closing:
            return False
        if not self._throttle.wants(fraction, what):
            return True
        return self.reports.progress(fraction, what)
