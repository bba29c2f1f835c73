"""Errors of the model store. Each is user-facing: the message says what happened and what to do."""

from __future__ import annotations

from gptoss_local.errors import UserError


class StoreError(UserError):
    """A model file cannot be pulled, adopted, verified or removed."""


class OfflineError(StoreError):
    """Offline mode is on and a file would have to be downloaded."""


class DiskFullError(StoreError):
    """The disk filled up (or there is not enough room to start); what was written is kept."""


class PullCancelled(Exception):
    """The user stopped the pull (not a failure); the partial file is kept and the next pull
    resumes it."""


class LockedError(StoreError):
    """Another gptoss-local process is working on the same file."""


class NoNetworkError(StoreError):
    """No source's host name could be resolved: this PC is offline, or has no DNS."""


class SourceError(StoreError):
    """One download source failed for good (after its retries); the next source may work.

    `unresolved` is True when its host name could not be resolved (no network, no DNS).
    """

    def __init__(self, source: str, message: str, unresolved: bool = False) -> None:
        super().__init__(f"{source}: {message}")
        self.source, self.reason, self.unresolved = source, message, unresolved
