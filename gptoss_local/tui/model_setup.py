"""Getting from "no model" to a loaded backend in the chat: the first-run screen when there are
questions (and again on F9), then the load on a thread worker; the `LoadingBanner` shows it.

Functions of the `ChatScreen`; the backend's life itself is `chat.model_host.ModelHost`'s. After
a failed load, a message sent tries the load again instead of being saved with one more failed
reply; it is sent once the model is ready, if the user has not moved on meanwhile.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gptoss_local.backends.base import BackendInfo
from gptoss_local.chat.model_host import Held, LoadReports
from gptoss_local.setup.first_run import Ready
from gptoss_local.tui.first_run import FirstRunScreen
from gptoss_local.tui.messages import (
    BackendLoaded,
    LoadProgressed,
    ModelLoadFailed,
    ModelLoadStarted,
)
from gptoss_local.tui.widgets import ChatInput

if TYPE_CHECKING:
    from gptoss_local.tui.chat_screen import ChatScreen


def reports(screen: ChatScreen) -> LoadReports:
    """The host's callbacks: messages to the screen, from the loading thread (the progress
    callback answers "stop" once the screen is closed, as the app is quitting)."""
    return LoadReports(
        started=lambda model: screen.post_message(ModelLoadStarted(model)),
        progress=lambda fraction, what: screen.post_message(LoadProgressed(fraction, what)),
        failed=lambda error: screen.post_message(ModelLoadFailed(str(error))),
        loaded=lambda backend: screen.post_message(BackendLoaded(backend.info())),
    )


def needs_first_run(screen: ChatScreen) -> bool:
    """Whether the first-run questions come first (nothing is chosen yet)."""
    return not screen.host.chosen and screen.setup is not None


def ask_first_run(screen: ChatScreen) -> None:
    """Open the first-run screen above the chat (the app does it as it starts, so that the
    questions are the first thing on screen); starting there loads the model chosen."""
    if screen.setup is not None:
        screen.app.push_screen(FirstRunScreen(screen.setup),
                               lambda ready: _set_up(screen, ready))  # fmt: skip


def load(screen: ChatScreen) -> None:
    """Load the model on a worker; a failure stays in the banner and is announced."""
    screen.run_worker(lambda: _announce(screen, screen.host.load()), thread=True, group="load",
                      exit_on_error=False)  # fmt: skip


def _announce(screen: ChatScreen, error: Exception | None) -> None:
    """On the loading thread: say that the load failed (the banner keeps saying why)."""
    if error is not None:
        screen.app.call_from_thread(screen.notify, str(error), title="Cannot load the model",
                                    severity="error", markup=False)  # fmt: skip


def _set_up(screen: ChatScreen, ready: Ready | None) -> None:
    if ready is None:  # the user quit on the first-run screen
        screen.app.exit()
        return
    screen.host.choose(ready.open, ready.model)
    screen.generation = ready.generation
    if screen.state.chat_id is None:
        screen.state.effort = ready.generation.effort
        screen.show_status()
    load(screen)  # the plan's warnings were on the screen just now: no toast


def choose_again(screen: ChatScreen) -> None:
    """Open the set-up screen again (F9); starting there replaces the loaded model."""
    setup = screen.setup
    if setup is None or setup.model_path is not None:
        screen.notify("This chat was started with --model-path FILE: quit and run "
                      "`gptoss-local chat` to choose a model.", markup=False)  # fmt: skip
        return
    if not screen.idle():
        return
    screen.app.push_screen(FirstRunScreen(setup, can_go_back=True),
                           lambda ready: _chosen(screen, ready))  # fmt: skip


def _chosen(screen: ChatScreen, ready: Ready | None) -> None:
    if ready is None:  # "Back"
        return
    screen.generation = ready.generation
    screen.warmer.stop()
    screen.status.info = None
    switch = screen.host.switch_to
    screen.run_worker(lambda: _announce(screen, switch(ready.open, ready.model)), thread=True,
                      group="load", exit_on_error=False)  # fmt: skip


def hold_until_loaded(screen: ChatScreen, text: str) -> bool:
    """After a failed load, a message sent tries the load again instead of being saved with
    one more failed reply; it is sent once the model is ready (and stays in the box if the load
    fails again). True when the message is held."""
    answer = screen.host.hold(Held(screen.state.chat_id, screen.state.editing, text))
    if answer == "wait":
        screen.notify("Still loading the model: the message goes once it is ready.")
    elif answer == "retry":
        screen.notify("Loading the model again: the message goes once it is ready.")
        load(screen)
    return answer != "send"


def loaded(screen: ChatScreen, info: BackendInfo) -> None:
    """The model is ready: show it, prefill, and send the message held for it if the chat, the
    edit and the text in the box are still what they were."""
    if not (screen.banner.is_attached and screen.status.is_attached):
        return  # loaded while the app was closing: the widgets are already gone
    screen.banner.loaded()
    screen.status.info, screen.status.waiting = info, ""
    screen.warm_up()
    held = screen.host.take_held()
    if held is None:
        return
    now = Held(screen.state.chat_id, screen.state.editing, screen.input.text.strip())
    if now == held:
        screen.post_message(ChatInput.Submitted(held.text))
    else:  # the user moved on meanwhile: their chat and their box stay as they are
        screen.notify(
            "The model is ready. The held message was not sent, as the chat or the text "
            "changed: press Enter to send what is in the box.",
            markup=False,
        )


def show_loading(
    screen: ChatScreen, message: ModelLoadStarted | LoadProgressed | ModelLoadFailed
) -> None:
    """Show how the load goes in the banner, and in the status bar instead of the model's name."""
    if not screen.banner.is_attached:  # the app is closing: the widgets are already gone
        return
    if isinstance(message, ModelLoadStarted):
        screen.banner.start(message.model)
        screen.status.waiting = f"loading {message.model}…"
    elif isinstance(message, LoadProgressed):
        screen.banner.show_progress(message.fraction, message.what)
    else:
        screen.banner.failed(message.error)
        screen.status.waiting = "the model is not loaded"


def show_plan_warnings(screen: ChatScreen) -> None:
    """Say what the plan warned about, once, without hiding the chat."""
    for warning in screen.warnings:
        screen.notify(warning, title="About the plan", severity="warning", timeout=12,
                      markup=False)  # fmt: skip
