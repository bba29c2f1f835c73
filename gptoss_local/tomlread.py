"""TOML parsing on every supported Python (tomllib from 3.11, the tomli backport before)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

TOMLDecodeError = tomllib.TOMLDecodeError


def load_toml(path: Path) -> dict[str, Any]:
    """Parse a TOML file; raises OSError or TOMLDecodeError."""
    with path.open("rb") as handle:
        return tomllib.load(handle)
