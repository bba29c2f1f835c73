"""Failures of the history in the UI: shown, remembered, never the end of the app.

An action whose history call fails (`HistoryError`: the file damaged, the disk full) shows why
and is remembered, which `gptoss-local chat` reports again at exit. The chat screen does both
(`ChatScreen.history_failed`); a widget posts `HistoryFailed` up to it.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, Protocol, TypeVar, cast

from gptoss_local.i18n import translate
from gptoss_local.session.errors import HistoryError

_Function = TypeVar("_Function", bound=Callable[..., Any])


class Reports(Protocol):
    """What reports a failure of the history: the chat screen, or a widget posting it up."""

    def history_failed(self, error: HistoryError, title: str) -> None: ...


def reports_history_errors(title: str) -> Callable[[_Function], _Function]:
    """Decorate a method (sync or async) of a `Reports`, so that a `HistoryError` it raises is
    reported with `title` (`history_failed`) instead of ending the app.

    `title` is marked with `N_()` where the decorator is written and looked up when shown."""

    def decorate(function: _Function) -> _Function:
        if inspect.iscoroutinefunction(function):

            @functools.wraps(function)
            async def run_async(owner: Reports, *args: object, **kwargs: object) -> object:
                try:
                    return await function(owner, *args, **kwargs)
                except HistoryError as exc:
                    owner.history_failed(exc, translate(title))
                    return None

            return cast(_Function, run_async)

        @functools.wraps(function)
        def run(owner: Reports, *args: object, **kwargs: object) -> object:
            try:
                return function(owner, *args, **kwargs)
            except HistoryError as exc:
                owner.history_failed(exc, translate(title))
                return None

        return cast(_Function, run)

    return decorate
