"""The runtime file: where the one engine of this machine (a `serve`) tells other commands its
address, PID, model and key.

`serve` claims it before it loads the model (its address still empty: the engine is starting,
and a second `serve` is refused before it loads a second copy), fills in the address once it
listens (`update`), and removes it when it stops cleanly. The file lives in the
data folder, private (0600): it holds the key. One is refused when another user owns it or
others may read it (anyone could have planted or read it). A claim is atomic (the whole file
appears at once, or the claim fails), so two serves cannot both hold it; a file whose PID is
dead is stale and gives way.
"""

from __future__ import annotations

import ctypes
import getpass
import json
import os
import stat
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gptoss_local import paths
from gptoss_local.errors import UserError
from gptoss_local.i18n import _

FILE_NAME = "engine.json"


class EngineFileError(UserError):
    """The runtime file cannot be trusted or claimed; the message says why and what to do."""


@dataclass(frozen=True)
class EngineRecord:
    """What the runtime file says of the engine.

    Attributes:
        url: Its base URL (with /v1); "" while it starts (loads, binds).
        pid: Its process.
        model: The model it serves.
        key: The key clients send (None: none needed).
        instance: A fresh id per start, which the server answers too (a recycled port or a
            foreign server answers another, or none).
        started: When it started (seconds since the epoch).
        user: Who started it.
    """

    url: str
    pid: int
    model: str
    key: str | None = field(default=None, repr=False)
    instance: str = field(default_factory=lambda: uuid.uuid4().hex)
    started: float = field(default_factory=time.time)
    user: str = field(default_factory=lambda: _user_name())


def runtime_path() -> Path:
    """Where the runtime file lives (nothing is created)."""
    return paths.data_dir() / FILE_NAME


def read_record(path: Path | None = None, uid: int | None = None) -> EngineRecord | None:
    """The record in the runtime file; None when there is none (or it is unreadable junk,
    which is removed).

    Args:
        path: The file (default: `runtime_path()`).
        uid: The user it must belong to (default: this process's; tests inject another).

    Raises:
        EngineFileError: the file belongs to another user, or others may read or write it.
    """
    path = path or runtime_path()
    try:
        info = path.stat()
    except FileNotFoundError:
        return None
    check_private(path, info, uid)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return EngineRecord(**{k: data[k] for k in EngineRecord.__dataclass_fields__})
    except FileNotFoundError:
        return None
    except (ValueError, KeyError, TypeError):
        remove(path)  # a file we did not write whole (a crash mid-claim cannot make one)
        return None


def check_private(path: Path, info: os.stat_result, uid: int | None = None) -> None:
    """Refuse a runtime file of another user, or one that others may read or write.

    Raises:
        EngineFileError: naming the file and what to do.
    """
    if os.name == "nt":  # the data folder under the profile is the user's own
        return
    me = os.getuid() if uid is None else uid
    if info.st_uid != me:
        raise EngineFileError(
            _("the runtime file {path} belongs to another user: it is not used").format(path=path),
            _("Remove it if you trust nobody else to have put it there."),
        )
    if stat.S_IMODE(info.st_mode) & 0o077:
        raise EngineFileError(
            _("the runtime file {path} may be read by others (mode {mode:o}): it is not used, "
              "since it holds the engine's key").format(path=path,
                                                       mode=stat.S_IMODE(info.st_mode)),
            _("Remove it and start the engine again."),
        )  # fmt: skip


def claim(record: EngineRecord, path: Path | None = None) -> Path:
    """Write `record` as the runtime file unless a live engine holds it (a stale file, of a
    dead PID, gives way). Returns the file's path.

    Raises:
        EngineFileError: a live engine holds it (its PID, model and address named), or the
            file there cannot be trusted.
    """
    path = path or runtime_path()
    paths.ensure_dir(path.parent)
    draft = path.with_name(f".{FILE_NAME}.{os.getpid()}.{record.instance}")
    fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(asdict(record), out)
        for _attempt in range(3):
            try:
                os.link(draft, path)  # atomic, and fails when the file exists
                return path
            except FileExistsError:
                holder = read_record(path)
                if holder is not None and pid_alive(holder.pid):
                    raise held_by(holder) from None
                remove(path)  # stale: its engine is gone
        raise EngineFileError(_("the runtime file {path} keeps coming back").format(path=path))
    finally:
        remove(draft)


def update(record: EngineRecord, path: Path | None = None) -> None:
    """Replace the runtime file, which `record`'s instance holds, by `record` (atomically).

    Raises:
        EngineFileError: another engine holds it now.
    """
    path = path or runtime_path()
    held = read_record(path)
    if held is None or held.instance != record.instance:
        raise EngineFileError(_("the runtime file {path} was taken over").format(path=path))
    draft = path.with_name(f".{FILE_NAME}.{os.getpid()}.{record.instance}")
    fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(asdict(record), out)
    os.replace(draft, path)


def held_by(holder: EngineRecord) -> EngineFileError:
    """The refusal of a second engine while `holder` runs."""
    message = (
        _("an engine already runs on this machine: PID {pid} serves {model} at {url}")
        if holder.url
        else _("an engine is starting on this machine: PID {pid}, {model}")
    )
    return EngineFileError(
        message.format(pid=holder.pid, model=holder.model, url=holder.url),
        _("Use it (other commands find it), or end it first with `gptoss-local stop`."),
    )


def release(record: EngineRecord, path: Path | None = None) -> None:
    """Remove the runtime file if it is still `record`'s (a clean stop)."""
    path = path or runtime_path()
    try:
        held = read_record(path)
    except EngineFileError:
        return
    if held is not None and held.instance == record.instance:
        remove(path)


def remove(path: Path) -> None:
    """Remove `path` if it is there."""
    path.unlink(missing_ok=True)


def pid_alive(pid: int) -> bool:
    """Whether process `pid` runs."""
    if os.name == "nt":  # where a signal 0 would end it
        return _windows_pid_alive(pid)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it runs, as another user
        return True
    return pid > 0 and not _zombie(pid)


def _windows_pid_alive(pid: int) -> bool:
    kernel32 = getattr(ctypes, "windll").kernel32  # noqa: B009 (Windows only)
    handle = kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
    if not handle:
        return bool(kernel32.GetLastError() == 5)  # access denied: it runs, as another user
    try:
        code = ctypes.c_ulong()
        kernel32.GetExitCodeProcess(handle, ctypes.byref(code))
        return code.value == 259  # STILL_ACTIVE
    finally:
        kernel32.CloseHandle(handle)


def _zombie(pid: int) -> bool:
    """Whether `pid` has ended and waits only for its parent to read its exit (Linux)."""
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return False
    return stat_line.rpartition(")")[2].split()[:1] == ["Z"]


def _user_name() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return ""


def as_dict(record: EngineRecord) -> dict[str, Any]:
    """The record as plain data, without its key (for `--json` output)."""
    data = asdict(record)
    data.pop("key")
    return data
