"""The user's folders as the browser's pages: which files are read and how (`reading`), their
index in SQLite FTS5 (`index`, updated incrementally), and the pages the model reads (`pages`).

Everything here is local: nothing is fetched, and only the folders the user named are read.
"""

from __future__ import annotations

from gptoss_local.library.failures import IndexDamagedError, IndexLockedError
from gptoss_local.library.index import (
    FolderInfo,
    Hit,
    Library,
    Progress,
    UpdateReport,
    default_path,
    display_name,
)
from gptoss_local.library.schema import LibraryError, check_fts5

__all__ = [
    "FolderInfo",
    "Hit",
    "IndexDamagedError",
    "IndexLockedError",
    "Library",
    "LibraryError",
    "Progress",
    "UpdateReport",
    "check_fts5",
    "default_path",
    "display_name",
]
