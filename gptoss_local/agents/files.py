"""An agent's own configuration file, changed with care: its entries merged into what the user
has, the user's original kept first, and put back on request.

The first time gptoss-local writes a file, the file as it was is copied beside it as
`NAME.gptoss-local-backup`; later writes keep that copy (it holds the original, not an earlier
merge). A file that did not exist is remembered by an empty backup: no original can be empty,
because a file that is not a JSON object is refused before anything is written.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from gptoss_local.errors import UserError
from gptoss_local.i18n import _

SUFFIX = ".gptoss-local-backup"


class AgentConfigError(UserError):
    """An agent's configuration file that gptoss-local cannot read or write."""


def backup_of(path: Path) -> Path:
    """Where the original of `path` is kept."""
    return path.with_name(path.name + SUFFIX)


def read_json(path: Path) -> dict[str, Any]:
    """The JSON object in `path` ({} when there is no file); a clear error when it is not one."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise AgentConfigError(_("cannot read {path}: {error}").format(
            path=path, error=getattr(exc, "strerror", None) or exc)) from None  # fmt: skip
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise _not_an_object(path, str(exc)) from None
    if not isinstance(data, dict):
        raise _not_an_object(path, _("not a JSON object"))
    return data


def section(data: dict[str, Any], key: str, path: Path) -> dict[str, Any]:
    """`data[key]`, an object (made when missing); a clear error when it is something else."""
    inner = data.setdefault(key, {})
    if not isinstance(inner, dict):
        raise _not_an_object(path, _("its {key!r} is not a JSON object").format(key=key))
    return inner


def write_json(path: Path, data: dict[str, Any], *, keep: bool = True) -> None:
    """Keep the original of `path` (once; not with `keep` False: a file of gptoss-local's own),
    then replace the file whole with `data`; a new file is the user's alone (it may hold a key).
    """
    if keep:
        keep_original(path)
    part = path.with_name(path.name + ".part")
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with os.fdopen(os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode), "w") as out:
            out.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        os.chmod(part, mode)
        part.replace(path)
    except OSError as exc:
        part.unlink(missing_ok=True)
        raise AgentConfigError(_("cannot write {path}: {error}").format(
            path=path, error=exc.strerror or exc)) from None  # fmt: skip


def keep_original(path: Path) -> None:
    """Copy `path` to its backup unless a backup is there already (an empty one when there is
    no file); never over an earlier backup."""
    backup = backup_of(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with backup.open("xb") as out:
            if path.exists():
                out.write(path.read_bytes())
    except FileExistsError:
        return
    except OSError as exc:
        raise AgentConfigError(_("cannot keep a copy of {path}: {error}").format(
            path=path, error=exc.strerror or exc)) from None  # fmt: skip
    if path.exists():
        shutil.copymode(path, backup)


def restore(path: Path) -> str | None:
    """Put the original of `path` back; what was done, or None when there is no backup."""
    backup = backup_of(path)
    try:
        empty = backup.stat().st_size == 0
    except FileNotFoundError:
        return None
    if empty:  # there was no file before gptoss-local wrote one
        path.unlink(missing_ok=True)
        backup.unlink()
        return _("removed {path}, which gptoss-local had made (there was none before)").format(
            path=path)  # fmt: skip
    backup.replace(path)
    return _("put your {path} back as it was before gptoss-local changed it").format(path=path)


def _not_an_object(path: Path, why: str) -> AgentConfigError:
    return AgentConfigError(
        _("{path} is not a JSON object gptoss-local can add to ({why}); it is left as it is.")
        .format(path=path, why=why),
        _("Fix the file (a comment or a trailing comma is enough to break it), or move it "
          "away, and run the command again."),
    )  # fmt: skip
