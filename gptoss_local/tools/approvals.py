"""Which tool calls run: the user's standing permissions, then whoever is asked.

A chat keeps one `Approvals` for as long as it is open: tools allowed in the settings
(`allowed_tools`, names or patterns like ``git__*``) run without asking, "always" answers
are remembered for the rest of the chat, and any other call goes to `ask` (the TUI's dialog).
Without `ask` (a script, `run`), a call that is not allowed is denied.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from gptoss_local.events import ToolCall
from gptoss_local.tools.registry import ToolInfo

Decision = Literal["once", "always", "deny"]
# Shows the call (name, arguments, the tool's note) and returns the user's answer. Called on
# the thread that runs the loop: a UI blocks it until the user has answered.
Ask = Callable[[ToolCall, ToolInfo], Decision]
How = Literal["allowed", "always", "once", "denied", "not_allowed"]


@dataclass(frozen=True)
class Verdict:
    """Whether a call may run, and why: "allowed" (settings or --allow-tool), "always" (for
    this chat), "once", "denied" (the user said no), "not_allowed" (no one to ask)."""

    run: bool
    how: How


class Approvals:
    """Standing permissions plus a way to ask; remembers "always" answers.

    Args:
        allowed: Tool names or fnmatch patterns that run without asking.
        ask: Asks the user about any other call; None denies them.
    """

    def __init__(self, allowed: Iterable[str] = (), ask: Ask | None = None) -> None:
        self._patterns = tuple(allowed)
        self._always: set[str] = set()
        self.ask = ask

    def allows(self, name: str) -> bool:
        """Whether `name` runs without asking."""
        return name in self._always or any(fnmatch.fnmatchcase(name, p) for p in self._patterns)

    def allow_always(self, name: str) -> None:
        """Let `name` run without asking for as long as this object lives (the chat)."""
        self._always.add(name)

    def decide(self, call: ToolCall, tool: ToolInfo) -> Verdict:
        """May `call` run? Asks when nothing standing says so. Permissions are the tool's
        (``browser`` allows ``browser.search`` and ``browser.open`` alike)."""
        if self.allows(tool.name):
            return Verdict(True, "always" if tool.name in self._always else "allowed")
        if self.ask is None:
            return Verdict(False, "not_allowed")
        answer = self.ask(call, tool)
        if answer == "always":
            self.allow_always(tool.name)
            return Verdict(True, "always")
        return Verdict(answer == "once", "once" if answer == "once" else "denied")
