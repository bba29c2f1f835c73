"""The chat app: the stylesheet, the app-wide keys and commands, and the chat screen.

The chat itself is `chat_screen.ChatScreen`, the app's default screen; the first-run screen,
when there are questions, opens on top of it. What is app-wide stays here: Ctrl+Q, Ctrl+C (stop,
twice: quit), the help, and the command palette's commands (`palette.ActionCommands`).
"""

from __future__ import annotations

import sys
from typing import ClassVar

from textual.app import App
from textual.binding import BindingType
from textual.screen import Screen

from gptoss_local.backends.base import GenerationSettings
from gptoss_local.chat.chat_state import ChatState
from gptoss_local.chat.model_host import Opener
from gptoss_local.chat.services import ChatServices
from gptoss_local.chat.tool_host import ChatTools
from gptoss_local.hardware.vram import VramMonitor
from gptoss_local.i18n import _
from gptoss_local.kinds import ContextPolicy, Effort
from gptoss_local.launch.engine_link import EngineLink
from gptoss_local.launch.preparation import Preparation, Ready
from gptoss_local.session.errors import HistoryError
from gptoss_local.session.history import History
from gptoss_local.tui.actions import app_bindings
from gptoss_local.tui.chat_screen import ChatScreen
from gptoss_local.tui.help import HelpScreen
from gptoss_local.tui.modals import ConfirmScreen
from gptoss_local.tui.palette import ActionCommands
from gptoss_local.tui.pump import favour_the_engine_thread
from gptoss_local.tui.quitting import SecondPress, copy_selection


class ChatApp(App[None]):
    """The gptoss-local chat. Build it with `make_app`."""

    CSS_PATH = "app.tcss"
    TITLE = "gptoss-local"
    BINDINGS: ClassVar[list[BindingType]] = app_bindings()
    COMMANDS = App.COMMANDS | {ActionCommands}  # Textual's own (theme, keys, quit) and ours

    def __init__(self, services: ChatServices) -> None:
        super().__init__()
        self.chat_screen = ChatScreen(services)
        self._interrupted = SecondPress()
        self._switch_interval = sys.getswitchinterval()
        self.declined_switch = False  # the engine's switch offered at the start was declined

    def get_default_screen(self) -> Screen[None]:
        return self.chat_screen

    def on_mount(self) -> None:
        self._switch_interval = favour_the_engine_thread()
        if self.chat_screen.banner.needs_first_run:
            self.chat_screen.banner.ask_first_run()
        offer = self.chat_screen.services.offer
        if offer is not None:  # nothing loads before the answer
            self.push_screen(ConfirmScreen(offer, _("Switch the engine")), self._offer_answered)

    def _offer_answered(self, switch: bool | None) -> None:
        if switch:
            self.chat_screen.banner.load()
        else:  # no second copy: the chat ends, saying what the engine holds
            self.declined_switch = True
            self.exit()

    def on_unmount(self) -> None:
        sys.setswitchinterval(self._switch_interval)

    # --- app-wide actions ----------------------------------------------------------------------

    async def action_quit(self) -> None:
        """Stop any reply (so the worker thread ends) and quit."""
        self.chat_screen.stop()
        self.exit()

    def action_help(self) -> None:
        """Show every key and what it does."""
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    async def action_interrupt(self) -> None:
        """Copy a selection, else stop the reply; pressed again soon after, quit."""
        if copy_selection(self.focused):
            return
        if self._interrupted():
            await self.run_action("quit")
            return
        if self.chat_screen.busy:
            note = _("Stopped the reply. Press Ctrl+C again to quit (Ctrl+Q quits at once).")
        else:
            note = _("Press Ctrl+C again to quit (Ctrl+Q quits at once).")
        self.chat_screen.action_stop()
        self.notify(note, timeout=3)

    # --- what `gptoss-local chat` asks once the app has exited ---------------------------------

    @property
    def history_error(self) -> HistoryError | None:
        """The last failure of the history, if any (reported again at exit)."""
        return self.chat_screen.history_error

    def unsent_text(self) -> str:
        """What is in the input box (also after the app has exited)."""
        return self.chat_screen.input.text

    def close_backend(self) -> None:
        """Free the model and stop the tools (after the app has exited); a load or reply still
        running stops."""
        self.chat_screen.close_model()


def make_app(
    history: History,
    backend_factory: Opener | None = None,
    generation: GenerationSettings | None = None,
    *,
    effort: Effort | None = None,
    chat_id: int | None = None,
    ready: Ready | None = None,
    setup: Preparation | None = None,
    vram: VramMonitor | None = None,
    tools: ChatTools | None = None,
    context_policy: ContextPolicy = "compact",
    engine: EngineLink | None = None,
    offer: str | None = None,
) -> ChatApp:
    """Build the chat app from its settings and services (`ChatServices`, built once here).

    Args:
        history: The open chat history (shared with the worker threads).
        backend_factory: Makes the backend on first use, on a worker thread; it is given a
            progress callback (`LoadProgress`) it may call while loading.
        generation: Sampling settings; the effort in it is replaced by the chat's.
        effort: The effort of a new chat (default: the one in `generation`).
        chat_id: A saved chat to open; None starts a new one.
        ready: What `Preparation.ready` settled: factory, generation and model name
            (instead of `backend_factory` and `generation`).
        setup: Open on the first-run screen, which gives the factory when the user starts.
        vram: Reads VRAM use for the status bar (default: NVML's, when a GPU answers).
        tools: The tools the model may call, and which run without asking (default: none;
            `gptoss-local chat` passes `ChatTools.from_settings`).
        context_policy: What a chat does when its prompt would leave the reply too little
            room (the `context_policy` setting).
        engine: How models reach the machine's engine (`chat.services.ChatServices.engine`).
        offer: Asked before the first load: switch the engine to the chat's model? (its
            `ready` then switches it); declining quits (`ChatApp.declined_switch`).
    """
    name = _("the model")
    warnings: tuple[str, ...] = ()
    if ready is not None:
        backend_factory, generation, name = ready.open, ready.generation, ready.model
        warnings = ready.warnings
    generation = generation or GenerationSettings()
    state = ChatState(history, chat_id, effort or generation.effort)
    services = ChatServices(history, state, generation, backend_factory, setup=setup,
                            model_name=name, vram=vram if vram is not None else VramMonitor(),
                            warnings=warnings, tools=tools or ChatTools(),
                            context_policy=context_policy, engine=engine,
                            offer=offer)  # fmt: skip
    return ChatApp(services)
