"""What a chat runs on, in one bundle: the history and the open chat, the model's opener and
settings, the set-up questions, the VRAM monitor, the tools and the context policy.

`tui.app.make_app` builds it once, and the app and its chat screen take it whole, rather than
the same ten arguments each. It holds plain objects only (no Textual), so anything may build one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from gptoss_local.backends.base import GenerationSettings
from gptoss_local.chat.chat_state import ChatState
from gptoss_local.chat.model_host import Opener
from gptoss_local.chat.tool_host import ChatTools
from gptoss_local.hardware.vram import VramMonitor
from gptoss_local.kinds import ContextPolicy
from gptoss_local.launch.engine_link import EngineLink
from gptoss_local.launch.preparation import Preparation
from gptoss_local.session.history import History


@dataclass(frozen=True)
class ChatServices:
    """The chat's services.

    Attributes:
        history: The open chat history (shared with the worker threads).
        state: Which chat is open, and its effort.
        generation: Sampling settings at the start; the effort in them is replaced by the chat's.
        opener: Makes the backend on a worker; None until the first-run screen gives one.
        setup: Asks the first-run questions (and again on F9); None with a fixed opener.
        model_name: What the loading banner calls the model.
        vram: Reads VRAM use for the status bar; None shows none.
        warnings: What the plan warned about, shown once when the chat opens.
        tools: The tools the model may call, and which run without asking.
        context_policy: What a chat does when its prompt would leave the reply too little
            room (`chat.context_budget`).
        root: The working folder, where `@` paths and the file picker start.
        engine: How models reach the machine's engine (F9 switches it rather than load a
            second copy); None: the chat loads its own.
        offer: The question to ask before the first load (the engine holds another model:
            switch it?); None: load at once.
    """

    history: History
    state: ChatState
    generation: GenerationSettings
    opener: Opener | None
    setup: Preparation | None = None
    model_name: str = "the model"
    vram: VramMonitor | None = None
    warnings: tuple[str, ...] = ()
    tools: ChatTools = field(default_factory=ChatTools)
    context_policy: ContextPolicy = "compact"
    root: Path = field(default_factory=Path.cwd)
    engine: EngineLink | None = None
    offer: str | None = None
