"""TOML parsing on every supported Python (tomllib from 3.11, the tomli backport before)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib


class TomlReadError(ValueError):
    """The file is not valid TOML, or not UTF-8 text; the message says where."""


def load_toml(path: Path) -> dict[str, Any]:
    """Parse a TOML file; raises OSError, or TomlReadError (also for text that is not UTF-8)."""
    with path.open("rb") as handle:
        try:
            return tomllib.load(handle)
        except tomllib.TOMLDecodeError as exc:
            raise TomlReadError(str(exc)) from None
        except UnicodeDecodeError as exc:
            raise TomlReadError(
                f"it is not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})"
            ) from None
