"""Errors whose message is meant for the user as it stands: the CLI prints it and exits 2."""

from __future__ import annotations

from gptoss_local.backends.base import BackendError
from gptoss_local.catalog import ManifestError
from gptoss_local.config import SettingsError
from gptoss_local.paths import PathsError
from gptoss_local.session.errors import HistoryError
from gptoss_local.store.errors import StoreError
from gptoss_local.store.gguf_check import GgufError


class WishError(ValueError):
    """A command-line choice that cannot be honoured (unknown model, bad context)."""


UserFacingError = (
    BackendError,
    GgufError,
    HistoryError,
    ManifestError,
    PathsError,
    SettingsError,
    StoreError,
    WishError,
)
