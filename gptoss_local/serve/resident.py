"""The model loaded while it is wanted: `ResidentBackend` opens it on the first request that
needs it, and closes it (giving its VRAM and RAM back) once no request has held it for the
keep-alive (Ollama's `keep_alive`: 5 minutes by default, 0 at once, negative never).

It is a `Backend` around the engine's opener, so `Service` serves it like any other: requests
`hold` it from their arrival to their last byte, waiting ones included, so it never unloads
under a reply that streams or waits; the latest request's keep-alive sets the timer (as
Ollama's does). What it holds and for whom, `state()` tells (`GET /gptoss-local/engine`).

`swap` lets the model go and loads another in its place (`POST /gptoss-local/engine/switch`):
only while no request holds it (it never waits: a reply would hold the switch, and everyone
behind it, for as long as it streams; a prefill, which nobody waits for, is stopped instead),
one switch at a time, and a request that comes during a switch is answered 503 (try again
shortly) rather than served by a model it did not name.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gptoss_local.backends.base import Backend, BackendInfo, Capabilities, Reply, ReplyRequest
from gptoss_local.serve.errors import ApiError
from gptoss_local.serve.keep_alive import DEFAULT_KEEP_ALIVE

GIVE_WAY_SECONDS = 10.0  # a cancelled prefill stops within one batch of the prompt


@dataclass
class Holder:
    """One request holding the model: the client's name, since when, whether it runs yet
    (else it waits its turn), and how to stop it when it is work nobody waits for."""

    client: str
    since: float = field(default_factory=time.time)
    running: bool = False
    gives_way: threading.Event | None = None  # set to stop it for a switch (a prefill)


class ResidentBackend:
    """A `Backend` that loads on demand and unloads after the keep-alive.

    Args:
        opener: Opens the model (the engine's load); called again after each unload.
        keep_alive: Seconds the model stays loaded once no request holds it (0: unload at
            once; negative: never); a request's own keep-alive replaces it for that wait.
        load_now: Load at once (else at the first request that needs the model).
        memory: What the loaded model takes (`{"vram": bytes, "ram": bytes}`, the plan's
            estimate), for `state()`.
        shape: What `info()` and `capabilities` say before the first load (the plan's, see
            `launch.resident.shape_before_load`); without it the model is loaded here once to
            learn them (and let go again unless `load_now`). A load replaces them with the
            engine's own.
    """

    def __init__(
        self,
        opener: Callable[[], Backend],
        keep_alive: float = DEFAULT_KEEP_ALIVE,
        load_now: bool = True,
        memory: dict[str, int] | None = None,
        shape: tuple[BackendInfo, Capabilities] | None = None,
    ) -> None:
        self._opener, self.default_keep_alive = opener, keep_alive
        self._memory = dict(memory or {})
        self._lock = threading.RLock()  # the backend, the holders, the timer (never a load)
        self._released = threading.Condition(self._lock)  # a holder let go
        self._load_lock = threading.Lock()  # one load at a time; `state()` answers meanwhile
        self._loading = False
        self._backend: Backend | None = None
        self._holders: dict[int, Holder] = {}
        self._tickets = itertools.count()
        self._timer: threading.Timer | None = None
        self._armed = 0  # which arming a timer belongs to: an older one's firing is ignored
        self._keep = keep_alive
        self._expires: float | None = None  # wall-clock time of the next unload
        self._kept_bytes: int | None = None
        self.loads = 0
        self._closed = False
        self._switching: str | None = None  # the model a switch loads (`swap`)
        self.path: Path | None = None  # the last loaded model's file, as its backend names it
        if shape is not None and not load_now:
            self._info, self.capabilities = shape
            return
        backend = self._loaded()
        self._info, self.capabilities = backend.info(), backend.capabilities
        if not load_now:
            self._unload()
        else:
            self._arm()

    @property
    def keep_alive(self) -> float:
        """The keep-alive now: the latest request's, else the server's."""
        return self._keep

    def info(self) -> BackendInfo:
        """What is (or will be) loaded, without loading it."""
        return self._info

    @contextmanager
    def hold(self, keep_alive: float | None = None, client: str = "") -> Iterator[Holder]:
        """Keep the model from unloading while the block runs (a request, from its arrival
        to its last byte); `keep_alive` (None: the server's) counts from the last release."""
        with self._lock:
            if self._switching is not None:
                raise ApiError(503, f"The engine is switching to {self._switching}: try again "
                               "shortly.", "switching_model")  # fmt: skip
            ticket, holder = next(self._tickets), Holder(client)
            self._holders[ticket] = holder
            self._keep = self.default_keep_alive if keep_alive is None else keep_alive
            self._disarm()
        try:
            yield holder
        finally:
            with self._lock:
                del self._holders[ticket]
                self._released.notify_all()
                if not self._holders and self._switching is None:
                    self._arm()

    def preload(self, keep_alive: float | None = None, client: str = "") -> None:
        """Load the model now, kept for `keep_alive` (None: the server's) from here; a
        keep-alive of 0 lets it go at once instead (Ollama's empty request)."""
        with self.hold(keep_alive, client):
            if keep_alive != 0:
                self._loaded()

    def stream(self, request: ReplyRequest, cancel: threading.Event | None = None) -> Reply:
        """The next turn, from the model loaded first if it was let go."""
        return self._loaded().stream(request, cancel)

    def prefill(self, request: ReplyRequest, cancel: threading.Event | None = None) -> int:
        """Evaluate ahead, when loaded (a prefill never loads the model by itself)."""
        with self._lock:
            backend = self._backend
        return backend.prefill(request, cancel) if backend is not None else 0

    def keep_conversations(self, max_bytes: int) -> None:
        """Keep other conversations' caches, in this load and the next ones."""
        self._kept_bytes = max_bytes
        with self._lock:
            if self._backend is not None:
                self._backend.keep_conversations(max_bytes)

    def count_prompt(self, request: ReplyRequest) -> int:
        """The prompt's tokens, by the model's tokenizer (loading it if needed)."""
        return self._loaded().count_prompt(request)

    def tokenize(self, text: str, special: bool = True) -> list[int]:
        """`text` as token ids (loading the model if needed)."""
        return self._loaded().tokenize(text, special)

    def close(self) -> None:
        """Free the model for good."""
        with self._lock:
            self._closed = True
            self._disarm()
            if self._backend is not None:
                self._unload()

    def swap(
        self, target: str, opener: Callable[[], Backend], memory: dict[str, int],
        done: Callable[[], None],
    ) -> None:  # fmt: skip
        """Let the model go and load `target` (opened by `opener`) in its place, never both
        at once; `done` runs once it is loaded, before another switch may begin. A load that
        fails puts the former opener back (its model loads on the next request).

        Raises:
            ApiError: 409 while a request holds the model (naming who; a prefill is stopped
                instead) or another switch runs.
            Exception: what the load raised.
        """
        with self._lock:
            self._refuse_swap()
            self._switching = target
            self._disarm()
            for holder in self._holders.values():
                assert holder.gives_way is not None  # `_refuse_swap` let only those through
                holder.gives_way.set()
            if not self._released.wait_for(lambda: not self._holders, GIVE_WAY_SECONDS):
                self._switching = None
                raise ApiError(409, "A prefill did not stop in time for the switch: try "
                               "again.", "model_in_use")  # fmt: skip
        try:
            with self._load_lock:  # after a load already under way, never beside it
                with self._lock:
                    self._unload()
                    former = (self._opener, self._memory, self._info, self.capabilities)
                    self._opener, self._memory = opener, dict(memory)
                try:
                    self._open()
                except BaseException:
                    with self._lock:
                        self._opener, self._memory, self._info, self.capabilities = former
                    raise
                done()
        finally:
            with self._lock:
                self._switching = None
                if not self._holders:
                    self._arm()

    def _refuse_swap(self) -> None:
        """Refuse a switch while the model is used or another switch runs (lock held); a
        prefill is no use: it gives way."""
        if self._switching is not None:
            raise ApiError(409, f"The engine is already switching to {self._switching}: ask "
                           "again once it has.", "switch_in_progress")  # fmt: skip
        users = ", ".join(f"{h.client or 'a client'} ({'running' if h.running else 'waiting'})"
                          for h in self._holders.values() if h.gives_way is None)  # fmt: skip
        if users:
            raise ApiError(409, f"The engine's model is in use by {users}: it switches only "
                           "when no reply runs or waits. Try again once they are done.",
                           "model_in_use")  # fmt: skip

    def state(self) -> dict[str, Any]:
        """What is loaded and for whom, as plain data (English keys, for `ps` and clients)."""
        with self._lock:
            holders = list(self._holders.values())
            loaded = self._backend is not None
            return {
                "loaded": loaded,
                "loading": self._loading,
                "switching": self._switching,
                "loads": self.loads,
                "memory": self._memory if loaded else {},
                "keep_alive": self._keep,
                "expires_at": self._expires if loaded else None,
                "running": [_shown(h) for h in holders if h.running],
                "waiting": [_shown(h) for h in holders if not h.running],
            }

    def _loaded(self) -> Backend:
        with self._load_lock:  # a second request waits for the first one's load
            with self._lock:
                if self._closed:
                    raise RuntimeError("the resident model was closed")
                if self._backend is not None:
                    return self._backend
            return self._open()

    def _open(self) -> Backend:
        """Open the model (the load lock held)."""
        with self._lock:
            self._loading = True
        try:
            backend = self._opener()
        finally:
            with self._lock:
                self._loading = False
        if self._kept_bytes is not None:
            backend.keep_conversations(self._kept_bytes)
        with self._lock:
            if self._closed:  # `close()` came while it loaded
                backend.close()
                raise RuntimeError("the resident model was closed")
            self._backend, self.loads = backend, self.loads + 1
            self.path = getattr(backend, "path", None)  # Ollama's listing reads the file
            self._info, self.capabilities = backend.info(), backend.capabilities
        return backend

    def _unload(self) -> None:
        backend, self._backend, self._expires = self._backend, None, None
        if backend is not None:
            backend.close()

    def _arm(self) -> None:
        """Start the idle timer (no request holds the model)."""
        self._disarm()
        if self._backend is None or self._keep < 0:
            return
        if self._keep == 0:
            self._unload()
            return
        self._expires = time.time() + self._keep
        self._armed += 1
        self._timer = threading.Timer(self._keep, self._expired, (self._armed,))
        self._timer.daemon = True
        self._timer.start()

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer, self._expires = None, None

    def _expired(self, armed: int) -> None:
        with self._lock:  # a request may have come (and re-armed) since the timer fired
            if armed == self._armed and not self._holders and self._timer:
                self._timer = None
                self._unload()


def _shown(holder: Holder) -> dict[str, Any]:
    return {"client": holder.client, "since": holder.since}
