"""Where gptoss-local keeps its files.

Every location is computed on demand and nothing is created here: importing this module or asking
for a path never touches the disk. `GPTOSS_LOCAL_HOME` relocates everything under one folder (tests,
portable installs, a second drive for the weights).
"""

from __future__ import annotations

import os
from pathlib import Path

from gptoss_local.errors import UserError
from gptoss_local.i18n import _

APP_NAME = "gptoss-local"
HOME_ENV = "GPTOSS_LOCAL_HOME"


class PathsError(UserError):
    """A folder gptoss-local needs cannot be one; the message names it and the fix."""


def check_home() -> None:
    """Refuse a `GPTOSS_LOCAL_HOME` that is (or lies inside) a file rather than a folder.

    Raises:
        PathsError: the message names the file in the way.
    """
    home = _home_override()
    if home is None:
        return
    found = existing_ancestor(home)
    if not found.is_dir():
        wrong = (
            _(
                "{variable}={home} is a file, not a folder: point {variable} at a folder "
                "(it is created if missing), or unset it to use the usual per-user folders"
            )
            if found == home.absolute()
            else _(
                "{variable}={home} lies inside the file {file}, not a folder: point {variable} "
                "at a folder (it is created if missing), or unset it to use the usual "
                "per-user folders"
            )
        )
        raise PathsError(wrong.format(variable=HOME_ENV, home=home, file=found))


def _home_override() -> Path | None:
    value = os.environ.get(HOME_ENV, "").strip()
    return Path(value).expanduser() if value else None


def _platform_dir(kind: str) -> Path:
    # platformdirs costs a few milliseconds to import; only pay it when a path is wanted.
    import platformdirs

    dirs = platformdirs.PlatformDirs(APP_NAME, appauthor=False)
    return Path(getattr(dirs, f"user_{kind}_path"))


def config_dir() -> Path:
    """Folder of the settings file."""
    home = _home_override()
    return home / "config" if home else _platform_dir("config")


def data_dir() -> Path:
    """Folder of the chat history and other state worth keeping."""
    home = _home_override()
    return home / "data" if home else _platform_dir("data")


def models_dir() -> Path:
    """Folder of the downloaded model weights (tens of GB)."""
    home = _home_override()
    return home / "models" if home else data_dir() / "models"


def logs_dir() -> Path:
    """Folder of log files, native llama.cpp logs included."""
    home = _home_override()
    return home / "logs" if home else _platform_dir("log")


def settings_file() -> Path:
    """The TOML settings file."""
    return config_dir() / "settings.toml"


def ensure_dir(path: Path, mode: int = 0o700) -> Path:
    """Create `path` (and parents) if missing; private to the user by default."""
    path.mkdir(parents=True, exist_ok=True, mode=mode)
    return path


def existing_ancestor(path: Path) -> Path:
    """The nearest folder at or above `path` that exists (for free-space checks before creation)."""
    path = path.absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    return path
