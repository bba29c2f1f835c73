"""The chat's model on screen: choosing it, loading it, and the banner above the chat while it
loads (what is happening, a progress bar, and, if loading fails, why and what to do; it stays
until the next attempt, unlike a notification).

The banner owns the chat's `chat.model_host.ModelHost` (the backend's life is the host's): it
asks the first-run questions when nothing is chosen (and again on F9), loads on thread workers,
and shows what the host reports (already thinned out: llama.cpp reports per tensor). The
reports bubble on to the screen as messages, and so does `ModelChosen`: the screen keeps the
sampling settings, the status bar and the message held for the model.

After a failed load, a message sent tries the load again instead of being saved with one more
failed reply (`hold`); the screen sends it once the model is ready, if the user has not moved on.
"""

from __future__ import annotations

from functools import partial

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import ProgressBar, Static

from gptoss_local.chat.model_host import Held, LoadReports, ModelHost, Opener
from gptoss_local.errors import UserError
from gptoss_local.i18n import _
from gptoss_local.launch.engine_link import EngineLink, Offer
from gptoss_local.launch.preparation import Preparation, Ready
from gptoss_local.tui.first_run import FirstRunScreen
from gptoss_local.tui.messages import (
    BackendLoaded,
    LoadProgressed,
    ModelChosen,
    ModelLoadFailed,
    ModelLoadStarted,
)
from gptoss_local.tui.modals import ConfirmScreen


class LoadingBanner(Vertical):
    """Hidden once the model is loaded; shown again only for a failure.

    Args:
        opener: Makes the backend; None until the first-run screen has chosen one.
        model_name: What the banner calls the model while it loads.
        setup: Asks the first-run questions (and again on F9); None with a fixed opener.
        engine: How a model chosen with F9 reaches the machine's engine (which is switched to
            it, once the user agrees, rather than a second copy loaded here); None: loaded here.
    """

    DEFAULT_CSS = """
    LoadingBanner { height: auto; padding: 0 1; margin: 0 1; border: round $accent; }
    LoadingBanner.-failed { border: round $error; }
    LoadingBanner #load-title { text-style: bold; }
    LoadingBanner.-failed #load-title { color: $error; }
    LoadingBanner ProgressBar { margin-top: 0; }
    """

    def __init__(
        self,
        opener: Opener | None,
        model_name: str,
        setup: Preparation | None,
        engine: EngineLink | None = None,
        *,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.setup, self.engine = setup, engine
        # Called on the loading thread; the progress callback answers "stop" once the banner
        # is closed, as the app is quitting.
        reports = LoadReports(
            started=lambda model: self.post_message(ModelLoadStarted(model)),
            progress=lambda fraction, what: self.post_message(LoadProgressed(fraction, what)),
            failed=lambda error: self.post_message(ModelLoadFailed(str(error))),
            loaded=lambda backend: self.post_message(BackendLoaded(backend.info())),
        )
        self.host = ModelHost(opener, model_name, reports)

    def compose(self) -> ComposeResult:
        yield Static(_("Loading the model…"), id="load-title", markup=False)
        yield ProgressBar(total=100, show_eta=False, id="load-bar")
        yield Static("", id="load-what", markup=False)

    # --- choosing and loading ------------------------------------------------------------------

    @property
    def needs_first_run(self) -> bool:
        """Whether the first-run questions come first (nothing is chosen yet)."""
        return not self.host.chosen and self.setup is not None

    @property
    def can_choose_again(self) -> bool:
        """Whether F9 opens the set-up screen: with --model-path FILE, the model stays that
        file and the context and effort can change (the file is loaded again)."""
        return self.setup is not None

    def ask_first_run(self) -> None:
        """Open the first-run screen above the chat (the app does it as it starts, so that the
        questions are the first thing on screen); starting there loads the model chosen."""
        if self.setup is not None:
            self.app.push_screen(FirstRunScreen(self.setup), self._set_up)

    def _set_up(self, ready: Ready | None) -> None:
        if ready is None:  # the user quit on the first-run screen
            self.app.exit()
            return
        self.host.choose(ready.open, ready.model)
        self.post_message(ModelChosen(ready.generation, switched=False))
        self.load()  # the plan's warnings were on the screen just now: no toast

    def choose_again(self) -> None:
        """Open the set-up screen again (F9); starting there replaces the loaded model."""
        if self.setup is not None:
            self.app.push_screen(FirstRunScreen(self.setup, can_go_back=True), self._chosen)

    def _chosen(self, ready: Ready | None) -> None:
        if ready is None:  # "Back"
            return
        if self.engine is None:
            self._switch(ready)
            return
        engine = self.engine  # asked on a worker: it looks for the engine over HTTP
        self.run_worker(lambda: self._through(engine, ready), thread=True, group="load",
                        exit_on_error=False)  # fmt: skip

    def _through(self, engine: EngineLink, ready: Ready) -> None:
        """On a worker: the model chosen through the engine; another model there is switched
        only once the user agrees (it affects every program that uses the engine)."""
        try:
            found = engine.through(ready)
        except UserError as error:
            self._announce(error)
            return
        if isinstance(found, Offer):
            screen = ConfirmScreen(found.question, _("Switch the engine"))
            answered = partial(self._offer_answered, found.ready)
            self.app.call_from_thread(self.app.push_screen, screen, answered)
        else:
            self.app.call_from_thread(self._switch, found)

    def _offer_answered(self, ready: Ready, switch: bool | None) -> None:
        if switch:
            self._switch(ready)
        else:
            self.notify(_("The engine keeps its model; this chat's model is unchanged."))

    def _switch(self, ready: Ready) -> None:
        """Let the chat's model go and load `ready` in its place."""
        self.post_message(ModelChosen(ready.generation, switched=True))
        switch = self.host.switch_to
        self.run_worker(lambda: self._announce(switch(ready.open, ready.model)), thread=True,
                        group="load", exit_on_error=False)  # fmt: skip

    def load(self) -> None:
        """Load the model on a worker; a failure stays in the banner and is announced."""
        self.run_worker(lambda: self._announce(self.host.load()), thread=True, group="load",
                        exit_on_error=False)  # fmt: skip

    def hold(self, held: Held) -> bool:
        """Whether the message `held` waits for the model: after a failed load it tries the load
        again (and stays in the box if that fails too); `BackendLoaded` says when it is ready."""
        answer = self.host.hold(held)
        if answer == "wait":
            self.notify(_("Still loading the model: the message goes once it is ready."))
        elif answer == "retry":
            self.notify(_("Loading the model again: the message goes once it is ready."))
            self.load()
        return answer != "send"

    def _announce(self, error: Exception | None) -> None:
        """On the loading thread: say that the load failed (the banner keeps saying why)."""
        if error is not None:
            self.app.call_from_thread(self.notify, str(error), title=_("Cannot load the model"),
                                      severity="error", markup=False)  # fmt: skip

    # --- what the host reports -----------------------------------------------------------------

    @on(ModelLoadStarted)
    def _started(self, message: ModelLoadStarted) -> None:
        self.remove_class("-failed")
        self.query_one("#load-title", Static).update(
            _("Loading {model}…").format(model=message.model)
        )
        self.query_one("#load-bar", ProgressBar).display = True
        self.query_one("#load-bar", ProgressBar).update(progress=0)
        self.query_one("#load-what", Static).update("")
        self.display = True

    @on(LoadProgressed)
    def _progressed(self, message: LoadProgressed) -> None:
        message.stop()  # only the banner shows it
        self.query_one("#load-bar", ProgressBar).update(progress=round(message.fraction * 100, 1))
        self.query_one("#load-what", Static).update(message.what)

    @on(BackendLoaded)
    def _loaded(self) -> None:
        self.display = False

    @on(ModelLoadFailed)
    def _failed(self, message: ModelLoadFailed) -> None:
        self.add_class("-failed")
        self.query_one("#load-title", Static).update(_("The model could not be loaded"))
        self.query_one("#load-bar", ProgressBar).display = False
        self.query_one("#load-what", Static).update(
            _(
                "{error}\n\nF9 chooses another model; sending a message tries again; Ctrl+Q quits."
            ).format(error=message.error)
        )
        self.display = True
