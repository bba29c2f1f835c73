"""The command palette's entries for the chat's actions (`actions.ACTIONS`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from gptoss_local.tui.actions import ACTIONS, Action
from gptoss_local.tui.chat_screen import ChatScreen
from gptoss_local.tui.first_run import FirstRunScreen


class ActionCommands(Provider):
    """Every action under its footer label, with its help; Quit is Textual's own entry.

    The chat's actions run on the chat screen, also from a dialog above it (the help, say), but
    are not offered on the first-run screen, where there is no chat yet.
    """

    def _commands(self) -> list[tuple[Action, Callable[[], Awaitable[object]]]]:
        chat = None if isinstance(self.screen, FirstRunScreen) else self._chat()
        commands: list[tuple[Action, Callable[[], Awaitable[object]]]] = []
        for action in sorted(ACTIONS, key=lambda a: a.shown_label):  # as Textual sorts its own
            if action.id == "quit":
                continue
            if action.app_wide:
                commands.append((action, partial(self.app.run_action, action.action)))
            elif chat is not None:
                commands.append((action, partial(self.app.run_action, action.action, chat)))
        return commands

    def _chat(self) -> ChatScreen | None:
        return next((s for s in self.app.screen_stack if isinstance(s, ChatScreen)), None)

    async def discover(self) -> Hits:
        """Every command, before anything is typed."""
        for action, run in self._commands():
            yield DiscoveryHit(action.shown_label, run, help=action.shown_help)

    async def search(self, query: str) -> Hits:
        """The commands whose label matches `query` (fuzzy, as Textual's own)."""
        matcher = self.matcher(query)
        for action, run in self._commands():
            if (score := matcher.match(action.shown_label)) > 0:
                yield Hit(score, matcher.highlight(action.shown_label), run, help=action.shown_help)
