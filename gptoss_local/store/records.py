"""A small record beside each verified file, so "verified" survives restarts.

The record (`.<file>.verified.json`) holds the file's size, modification time and inode as they
were when it was hashed, and the sha256 found. It counts only while all three still match, so a
file replaced or changed since is hashed again rather than trusted.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from gptoss_local.store.layout import FilePaths

VERSION = 1


def _identity(path: Path) -> dict[str, int]:
    st = path.stat()
    return {"bytes": st.st_size, "mtime_ns": st.st_mtime_ns, "inode": st.st_ino}


def write_record(fp: FilePaths, sha256: str) -> None:
    """Record that `fp.final`, as it is now, has sha256 `sha256` (atomically)."""
    data = {"version": VERSION, "sha256": sha256, **_identity(fp.final)}
    tmp = fp.record.with_name(f"{fp.record.name}.{os.getpid()}-{threading.get_ident()}.tmp")
    tmp.write_text(json.dumps(data), encoding="utf-8")
    os.replace(tmp, fp.record)


def recorded_sha256(fp: FilePaths) -> str | None:
    """The sha256 recorded for `fp.final`, or None when there is none or the file has changed."""
    try:
        data = json.loads(fp.record.read_text(encoding="utf-8"))
        now = _identity(fp.final)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("version") != VERSION:
        return None
    if any(data.get(key) != value for key, value in now.items()):
        return None
    sha = data.get("sha256")
    return sha if isinstance(sha, str) else None


def forget(fp: FilePaths) -> None:
    """Remove the record (the file is gone or about to change)."""
    fp.record.unlink(missing_ok=True)
