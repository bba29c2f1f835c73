"""A small record beside each verified file, so "verified" survives restarts.

The record (`.<file>.verified.json`) holds the file's size, modification time and inode as they
were when it was hashed, and the sha256 found. It counts only while all three still match, so a
file replaced or changed since is hashed again rather than trusted.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from pathlib import Path

from gptoss_local.store.layout import FilePaths

VERSION = 1


def _identity(path: Path) -> dict[str, int]:
    st = path.stat()
    return {"bytes": st.st_size, "mtime_ns": st.st_mtime_ns, "inode": st.st_ino}


def write_record(fp: FilePaths, sha256: str, gguf_problem: str | None = None) -> bool:
    """Record that `fp.final`, as it is now, has sha256 `sha256` (atomically), and what the
    GGUF check refused in it, if it refused it.

    Returns:
        False when the record could not be written (a read-only folder): it is only a cache,
        so the file is simply hashed again next time.
    """
    data: dict[str, object] = {"version": VERSION, "sha256": sha256, **_identity(fp.final)}
    if gguf_problem:
        data["gguf_problem"] = gguf_problem
    tmp = fp.record.with_name(f"{fp.record.name}.{os.getpid()}-{threading.get_ident()}.tmp")
    try:
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, fp.record)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        return False
    return True


def _record(fp: FilePaths) -> dict | None:
    """The record of `fp.final` while the file is unchanged since; None otherwise."""
    try:
        data = json.loads(fp.record.read_text(encoding="utf-8"))
        now = _identity(fp.final)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("version") != VERSION:
        return None
    if any(data.get(key) != value for key, value in now.items()):
        return None
    return data


def recorded_sha256(fp: FilePaths) -> str | None:
    """The sha256 recorded for `fp.final`, or None when there is none or the file has changed."""
    sha = (_record(fp) or {}).get("sha256")
    return sha if isinstance(sha, str) else None


def recorded_gguf_problem(fp: FilePaths) -> str | None:
    """Why the GGUF check refused `fp.final` when it was last checked, if it did."""
    problem = (_record(fp) or {}).get("gguf_problem")
    return problem if isinstance(problem, str) else None
