"""Getting from "no model" to a loaded backend inside the app: the first-run screen when there
are questions, then the load on a thread worker with its progress in the `LoadingBanner`.

A mixin of `ChatApp`. The backend is created once, under a lock, by whichever thread needs it
first (the load worker, or a reply worker if the user sent before loading finished). Quitting
during a load makes the progress callback answer "stop", so llama.cpp abandons the load.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gptoss_local.backends.base import Backend, BackendError, GenerationSettings
from gptoss_local.tui.actions import ACTIONS
from gptoss_local.tui.first_run import FirstRunScreen
from gptoss_local.tui.loading import LoadingBanner
from gptoss_local.tui.messages import BackendLoaded
from gptoss_local.tui.status import StatusBar
from gptoss_local.tui.widgets import ChatInput

if TYPE_CHECKING:
    from textual.app import App

    from gptoss_local.setup.first_run import Opener, Ready, Setup

    _Base = App[None]
else:
    _Base = object


# The chat's actions that make no sense before there is a chat (Textual's own, like moving the
# focus with Tab, stay allowed).
CHAT_ONLY_ACTIONS = {action for _id, _key, action, _label, _help in ACTIONS} - {"quit", "help"}


@dataclass(frozen=True)
class Held:
    """A message sent while the model was not loaded: for which chat (and edit) it was meant."""

    chat_id: int | None
    editing: int | None
    text: str


class ModelLoading(_Base):
    """The backend's life in the app; `ChatApp.__init__` sets the attributes declared here."""

    generation: GenerationSettings
    effort: str
    chat_id: int | None
    model_name: str
    _factory: Opener | None
    _setup: Setup | None
    _backend: Backend | None
    _backend_lock: threading.Lock
    _quitting: threading.Event
    _cancel: threading.Event | None  # the reply being written, if any
    _load_failed: bool  # the last load failed and nothing is loaded
    _send_after_load: Held | None  # a message held while the model loads again
    editing: int | None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """On the first-run screen the chat's own actions are off (and out of the footer)."""
        return action not in CHAT_ONLY_ACTIONS or not isinstance(self.screen, FirstRunScreen)

    def start_model(self) -> None:
        """Ask the first-run questions if nothing is chosen yet, else load at once."""
        if self._factory is None and self._setup is not None:
            self.push_screen(FirstRunScreen(self._setup), self._setup_done)
        else:
            self._load_backend()

    def action_choose_model(self) -> None:
        """Open the set-up screen again; starting there replaces the loaded model."""
        setup = self._setup
        if setup is None or setup.model_path is not None:
            self.notify("This chat was started with --model-path FILE: quit and run "
                        "`gptoss-local chat` to choose a model.", markup=False)  # fmt: skip
            return
        if self.busy:
            self.notify("A reply is being written: wait, or press Esc to stop it.")
            return
        self.push_screen(FirstRunScreen(setup, can_go_back=True), self._model_chosen)

    def _model_chosen(self, ready: Ready | None) -> None:
        if ready is None:  # "Back"
            return
        self.generation, self.model_name = ready.generation, ready.model
        self.stop_warming()
        status = self.query_one(StatusBar)
        status.info = None
        status.refresh_text()
        self.run_worker(lambda: self._switch_to(ready.open), thread=True, group="load",
                        exit_on_error=False)  # fmt: skip

    def _switch_to(self, opener: Opener) -> None:
        with self._backend_lock:  # the old model goes before the new one takes its memory
            old, self._backend, self._factory = self._backend, None, opener
            self._load_failed = False
            if old is not None:
                old.close()
        self._load_in_thread()

    @property
    def busy(self) -> bool:
        """Whether a reply is being written (the app overrides this)."""
        raise NotImplementedError

    if TYPE_CHECKING:  # provided by `Warming` (a stub here would shadow it in the app's MRO)

        def warm_up(self) -> None: ...

        def stop_warming(self) -> None: ...

    def _setup_done(self, ready: Ready | None) -> None:
        if ready is None:  # the user quit on the first-run screen
            self.exit()
            return
        self._factory, self.generation, self.model_name = ready.open, ready.generation, ready.model
        if self.chat_id is None:
            self.effort = ready.generation.effort
            status = self.query_one(StatusBar)
            status.effort = self.effort
            status.refresh_text()
        self._load_backend()  # the plan's warnings were on the screen just now: no toast

    def show_plan_warnings(self, warnings: tuple[str, ...]) -> None:
        """Say what the plan warned about, once, without hiding the chat."""
        for warning in warnings:
            self.notify(warning, title="About the plan", severity="warning", timeout=12,
                        markup=False)  # fmt: skip

    def backend(self) -> Backend:
        """The backend, created by the factory on first use (on a worker thread: it is slow)."""
        with self._backend_lock:
            if self._backend is None:
                if self._factory is None:
                    raise BackendError("no model is chosen yet: finish the first-run screen")
                banner = self.query_one(LoadingBanner)
                self.call_from_thread(banner.start, self.model_name)
                self.call_from_thread(self._status_note, f"loading {self.model_name}…")
                try:
                    self._backend = self._factory(self._load_progress)
                except Exception as exc:  # the banner says why until the next attempt
                    self._load_failed, self._send_after_load = True, None
                    if not self._quitting.is_set():
                        self.call_from_thread(banner.failed, str(exc))
                        self.call_from_thread(self._status_note, "the model is not loaded")
                    raise
                self._load_failed = False
                self.post_message(BackendLoaded(self._backend.info()))
            return self._backend

    def hold_until_loaded(self, text: str) -> bool:
        """After a failed load, a message sent tries the load again instead of being saved
        with one more failed reply; it is sent once the model is ready (and stays in the box if
        the load fails again). True when the message is held."""
        held = Held(self.chat_id, self.editing, text)
        if self._send_after_load is not None:  # loading again already
            self._send_after_load = held
            self.notify("Still loading the model: the message goes once it is ready.")
            return True
        if not self._load_failed:
            return False
        self._send_after_load, self._load_failed = held, False
        self.notify("Loading the model again: the message goes once it is ready.")
        self._load_backend()
        return True

    def _load_progress(self, fraction: float, what: str) -> bool:
        """Called on the loading thread; False stops the load (the app is quitting)."""
        if self._quitting.is_set():
            return False
        banners = self.query(LoadingBanner)
        if not banners:  # the screen is being torn down; the quit check above will stop us
            return True
        banner = banners.first()
        if banner.wants(fraction, what):
            try:
                self.call_from_thread(banner.show_progress, fraction, what)
            except RuntimeError:  # the app stopped while we were loading
                return False
        return True

    def _load_backend(self) -> None:
        self.run_worker(self._load_in_thread, thread=True, group="load", exit_on_error=False)

    def _load_in_thread(self) -> None:
        try:
            self.backend()
        except Exception as exc:  # in the banner now; the next send tries to load again
            if self._quitting.is_set():
                return
            text, title = str(exc), "Cannot load the model"
            self.call_from_thread(self.notify, text, title=title, severity="error", markup=False)

    def on_backend_loaded(self, message: BackendLoaded) -> None:
        banners, bars = self.query(LoadingBanner), self.query(StatusBar)
        if not banners or not bars:  # loaded while the app was closing: widgets already gone
            return
        banners.first().loaded()
        status = bars.first()
        status.info, status.waiting = message.info, ""
        status.refresh_text()
        self.warm_up()
        held, self._send_after_load = self._send_after_load, None
        if held is None:
            return
        now = Held(self.chat_id, self.editing, self.query_one(ChatInput).text.strip())
        if now == held:
            self.post_message(ChatInput.Submitted(held.text))
        else:  # the user moved on meanwhile: their chat and their box stay as they are
            self.notify(
                "The model is ready. The held message was not sent, as the chat or the text "
                "changed: press Enter to send what is in the box.",
                markup=False,
            )

    def _status_note(self, text: str) -> None:
        if not self.query(StatusBar):
            return
        status = self.query_one(StatusBar)
        status.waiting = text
        status.refresh_text()

    def close_backend(self) -> None:
        """Free the model (after the app has exited); a load still running is told to stop,
        and so is a reply (an exit that did not go through Quit may leave one running)."""
        self._quitting.set()
        self.stop_warming()
        if self._cancel is not None:
            self._cancel.set()
        with self._backend_lock:
            if self._backend is not None:
                self._backend.close()
                self._backend = None
