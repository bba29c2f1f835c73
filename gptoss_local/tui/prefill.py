"""The next reply's prefill on the chat screen: whenever the chat settles (the model loaded, the
tools built, a reply ended, another chat opened, the effort or instructions changed), the prompt
the next reply will start with is evaluated on a worker (`chat.warmer.PrefillWarmer`).

Its request is made as the reply will make it (`chat.next_reply.NextReply`): the same tools,
offered as the engine can offer them, and the same settings, so the cached prefix is the one the
reply reads. It waits for the tools (the reply offers them all) and never triggers a load.
"""

from __future__ import annotations

from typing import Protocol

from gptoss_local.backends.base import GenerationSettings
from gptoss_local.chat.chat_state import ChatState
from gptoss_local.chat.model_host import ModelHost
from gptoss_local.chat.next_reply import NextReply
from gptoss_local.chat.threads import RunInThread
from gptoss_local.chat.tool_host import ToolHost
from gptoss_local.chat.warmer import PrefillWarmer
from gptoss_local.session.errors import HistoryError


class PrefillScreen(Protocol):
    """What the prefill needs of the chat screen."""

    host: ModelHost
    tools: ToolHost
    generation: GenerationSettings  # the model's, as it is now (F9 may change it)

    @property
    def busy(self) -> bool: ...


class Prefill:
    """The open chat's next prompt, prefilled while the user reads or types.

    Args:
        screen: The chat screen (its model, tools and settings).
        state: Which chat is open, and its effort.
        in_worker: Runs the prefill on a thread worker of the screen.
    """

    def __init__(self, screen: PrefillScreen, state: ChatState, in_worker: RunInThread) -> None:
        self.screen, self.state = screen, state
        self.warmer = PrefillWarmer(in_worker)
        self.tools_ready = False  # set when the screen has heard so (`tools_opened`)

    def tools_opened(self) -> None:
        """The tools are built: the next prompt is known, tools and all."""
        self.tools_ready = True
        self.warm_up()

    def warm_up(self) -> None:
        """Prefill the open chat's next prompt on a worker; only with a loaded model, the tools
        built and no reply running (each comes back here when it changes)."""
        screen = self.screen
        backend = screen.host.backend
        if backend is None or screen.busy or not self.tools_ready:
            return
        try:
            registry = screen.tools.for_chat(self.state.chat_id)
            conversation = self.state.next_conversation()
        except HistoryError:  # the reply will say what is wrong with the history
            self.warmer.stop()
            return
        reply = NextReply(conversation, screen.generation, self.state.effort)
        self.warmer.start(backend, reply.request(backend, registry))

    def stop(self) -> None:
        """Stop the prefill in progress (a reply starts, the model goes, the app quits)."""
        self.warmer.stop()
