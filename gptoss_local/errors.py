"""The root of every failure whose message is meant for the user as it stands.

Each layer derives its own errors from `UserError` (`ManifestError`, `StoreError`, `BackendError`,
`HistoryError`, ...); `cli.main` catches the root once, prints the message and its hint, and
exits 2. Nothing here imports another module of the package, so every layer can use it.
"""

from __future__ import annotations


class UserError(Exception):
    """A failure to tell the user as it is; `hint` says what to do about it, when that helps."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint

    def __str__(self) -> str:
        base = super().__str__()
        return f"{base}\n{self.hint}" if self.hint else base


class WishError(UserError):
    """A choice that cannot be honoured (a bad context, no model that fits)."""


class UnknownModelError(WishError):
    """No model of the manifest has that name or alias; the message lists the choices."""


class UnknownSourceError(WishError):
    """No download source of the manifest has that name; the message lists the choices."""
