"""The chat's tools: one registry for the app, built on another thread, with a python tool per chat.

Building the registry starts the MCP servers (seconds), so the chat opens at once and the tools
follow: `ToolHost.open` runs the build on a worker and reports its `problems` when done. A reply
that starts earlier waits for it (`for_chat`), so every reply and every prefill offers the same
tools. Each chat gets its own python tool (scratch folder ``python/chat-ID``), switched when
another chat replies or is prefilled, and its own browser pages (the browser, offered when the
settings name `docs` folders, is one index for the app); each chat also keeps its own
`Approvals`, so "always for this chat" lasts as long as the app runs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from gptoss_local.chat.threads import RunInThread, start_thread
from gptoss_local.config import Settings
from gptoss_local.i18n import _
from gptoss_local.tools import MAX_CALLS, Approvals, Ask, ToolRegistry, ToolsError, open_tools
from gptoss_local.tools import python_tool as make_python_tool
from gptoss_local.tools.python_tool import PythonTool
from gptoss_local.tools.sandbox import detect


def _no_python(_chat_id: int) -> PythonTool | None:
    return None


@dataclass(frozen=True)
class ChatTools:
    """What the chat offers and how it asks.

    Attributes:
        open: Builds the registry without the python tool (blocking: MCP servers start).
        python: The python tool of chat N; None offers none.
        allowed: Tool names or patterns that run without asking (settings' `allowed_tools`).
        max_calls: Tool calls answered per reply.
    """

    open: Callable[[], ToolRegistry] = ToolRegistry
    python: Callable[[int], PythonTool | None] = _no_python
    allowed: tuple[str, ...] = ()
    max_calls: int = MAX_CALLS

    @classmethod
    def from_settings(cls, settings: Settings) -> ChatTools:
        """The python tool and mcp.json's servers, with the settings' limits and permissions."""
        return cls(
            open=lambda: _open(settings),
            python=lambda chat_id: make_python_tool(settings, f"chat-{chat_id}"),
            allowed=settings.allowed_tools,
            max_calls=settings.max_tool_calls,
        )


def _open(settings: Settings) -> ToolRegistry:
    # The browser's index is brought up to date here, on the build's thread, not the UI's.
    registry = open_tools(settings, label="chat", python=False, browser=bool(settings.docs))
    try:  # on this thread, so the first chat's python tool is made without a wait
        detect()
    except ToolsError as exc:
        registry.problems.append(_("The python tool is off: {error}").format(error=exc))
    return registry


class ToolHost:
    """The app's registry, once built, and each chat's approvals.

    Args:
        tools: What to build and allow.
        run_in_thread: Starts the build (the TUI passes a thread worker).
    """

    def __init__(self, tools: ChatTools, run_in_thread: RunInThread = start_thread) -> None:
        self.tools = tools
        self._run = run_in_thread
        self._registry: ToolRegistry | None = None
        self._built = threading.Event()
        self._lock = threading.Lock()
        self._python_chat: int | None = None
        self._approvals: dict[int, Approvals] = {}
        self._closed = False

    @property
    def registry(self) -> ToolRegistry | None:
        """The registry, or None while it is being built."""
        return self._registry if self._built.is_set() else None

    def open(self, done: Callable[[list[str]], object]) -> None:
        """Build the registry on another thread; `done(problems)` is called there when ready."""

        def build() -> None:
            try:
                registry = self.tools.open()
            except ToolsError as exc:  # e.g. GPTOSS_LOCAL_SANDBOX names a sandbox not here
                registry = ToolRegistry()
                registry.problems.append(_("Tools are off: {error}").format(error=exc))
            with self._lock:
                self._registry = registry
                self._built.set()
                if self._closed:  # the app ended while the servers started
                    registry.close()
                    return
            done(list(registry.problems))

        self._run(build)

    def for_chat(self, chat_id: int | None, cancel: threading.Event | None = None) -> ToolRegistry:
        """The registry with chat `chat_id`'s python tool (None: keep the one offered); waits
        for the build, which only the end of the app (or `cancel`) cuts short."""
        while not self._built.wait(0.05):
            if cancel is not None and cancel.is_set():
                return ToolRegistry()
        with self._lock:
            registry = self._registry
            assert registry is not None
            if chat_id is not None and chat_id != self._python_chat and not self._closed:
                try:
                    python = self.tools.python(chat_id)
                except ToolsError:  # a sandbox that does not work here: `tools` says why
                    python = None
                registry.set_python(python)
                self._python_chat = chat_id
            if chat_id is not None and registry.browser is not None:
                registry.browser.switch(chat_id)  # each chat browses its own pages
            return registry

    def approvals(self, chat_id: int, ask: Ask) -> Approvals:
        """Chat `chat_id`'s approvals: the settings' permissions, its "always" answers, `ask`."""
        found = self._approvals.get(chat_id)
        if found is None:
            found = self._approvals[chat_id] = Approvals(self.tools.allowed, ask)
        found.ask = ask
        return found

    def close(self) -> None:
        """Stop the python workers and MCP servers (a build still running stops them when done)."""
        with self._lock:
            self._closed = True
            if self._registry is not None:
                self._registry.close()
