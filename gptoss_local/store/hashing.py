"""SHA-256 of files on disk, with progress."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from gptoss_local.store.progress import Meter

CHUNK = 4 << 20


def hash_file(path: Path, meter: Meter | None = None, limit: int | None = None) -> Any:
    """The sha256 state of the first `limit` bytes of `path` (all of it by default).

    Returns a hashlib object, so a resumed download can keep feeding it.
    """
    hasher = hashlib.sha256()
    buf = bytearray(CHUNK)
    view = memoryview(buf)
    left = limit
    with path.open("rb", buffering=0) as f:
        while left is None or left > 0:
            n = f.readinto(view if left is None or left >= CHUNK else view[:left])
            if not n:
                break
            hasher.update(view[:n])
            left = None if left is None else left - n
            if meter:
                meter.add(n)
    if meter:
        meter.finish()
    return hasher


def sha256_file(path: Path, meter: Meter | None = None) -> str:
    """The sha256 of `path` as 64 hexadecimal digits."""
    return str(hash_file(path, meter).hexdigest())
