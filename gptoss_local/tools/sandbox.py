"""Where the python tool's worker runs: the strongest isolation this computer offers.

In order of preference, on Linux:

1. ``bwrap`` (bubblewrap): no network (a network namespace of its own), its own process,
   IPC and UTS namespaces, a read-only view of the system's libraries and of this Python
   installation only (not your home folder), an empty ``/tmp`` in memory (no bigger than the
   memory limit, with bubblewrap 0.5 or later), and the chat's scratch folder at
   ``/mnt/data``, where gpt-oss expects it.
2. ``unshare --net --pid --mount-proc``: no network, its own PID namespace with a fresh
   ``/proc`` (gptoss-local's environment is out of sight, and every process of the code ends
   when the worker does), a sized tmpfs on ``/tmp``, root's capabilities dropped (setpriv);
   but the file system is not confined (works as root, or where unprivileged user namespaces
   are allowed: ``--map-root-user``). A Python installation or scratch folder under ``/tmp``
   is bound back over that tmpfs, at the same path.
3. Nothing: the code runs as you, with your network, your files and a view of your processes
   (Windows, macOS, and Linux without either). `Sandbox.summary` says so in plain words, and
   the tool's description and listing repeat it.

The cap on processes is not the sandbox's: see `pids_group.py` and the worker's RLIMIT_NPROC.
Each way is tried once per process (a probe that starts ``true`` in it), so a ``bwrap``
that the kernel refuses (a container without user namespaces) is not used.
``GPTOSS_LOCAL_SANDBOX=bwrap|unshare|none`` picks one (a choice that does not work here is
refused at the first call).
"""

from __future__ import annotations

import functools
import os
import shutil
import site
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from gptoss_local.i18n import _
from gptoss_local.tools.errors import ToolsError

SandboxKind = Literal["bwrap", "unshare", "none"]
SANDBOX_ENV = "GPTOSS_LOCAL_SANDBOX"
MODEL_FOLDER = "/mnt/data"  # where gpt-oss was trained to find its files
# What the interpreter and common libraries need from the system, read-only.
SYSTEM_PATHS = (
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc/alternatives",
    "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime",
    "/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/hosts", "/etc/ssl",
    "/etc/ca-certificates", "/etc/mime.types", "/usr/share/zoneinfo",
)  # fmt: skip
_PROBE_SECONDS = 10


@dataclass(frozen=True)
class Sandbox:
    """One way of running the worker, with what it enforces.

    Attributes:
        kind: "bwrap", "unshare" or "none".
        prefix: The command that goes in front of the worker's (unshare and its options; for
            bwrap, its path: the worker's PATH is not this process's).
        network_blocked: Code cannot reach any network (not even this computer's loopback).
        files_confined: Code sees only system libraries, Python and its scratch folder.
        own_processes: A PID namespace: the code sees only its own processes (not the
            environment of gptoss-local's), and they all end with the worker.
        tmp_sized: ``/tmp`` is a tmpfs no bigger than the memory limit.
        setpriv: unshare only: setpriv, which drops root's capabilities inside, so the code
            cannot unmount its ``/proc`` to see the computer's.
    """

    kind: SandboxKind
    prefix: tuple[str, ...] = ()
    network_blocked: bool = False
    files_confined: bool = False
    own_processes: bool = False
    tmp_sized: bool = False
    setpriv: str = ""

    @property
    def summary(self) -> str:
        """What is enforced, in a sentence for the user."""
        if self.kind == "bwrap":
            tmp = "a /tmp in memory" + (" within the memory limit" if self.tmp_sized else "")
            return (
                "sandboxed with bubblewrap: no network, read-only system, files only in its "
                f"scratch folder (seen as {MODEL_FOLDER}), its own processes, {tmp}"
            )
        if self.kind == "unshare":
            return (
                "no network, its own processes and a /tmp in memory within the memory limit "
                "(unshare), but NOT confined to its folder: the code can read and write your "
                "files (install bubblewrap to confine it)"
            )
        return (
            "NOT sandboxed on this system: the code runs as you, with network access, your "
            "files and your /tmp, and can read the environment of your processes, keys "
            "included (on Linux, install bubblewrap to isolate it)"
        )

    def folder(self, scratch: Path) -> str:
        """The scratch folder as the code sees it."""
        return MODEL_FOLDER if self.kind == "bwrap" else str(scratch)

    def command(
        self, argv: list[str], scratch: Path, tmp_bytes: int = 0, *, python: bool = True
    ) -> tuple[list[str], Path]:
        """The command line that runs `argv` in this sandbox, and its working folder.
        `tmp_bytes` sizes its ``/tmp`` (0: the kernel's default, half the memory); `python`:
        `argv` runs this Python, whose folders under ``/tmp`` unshare then binds back."""
        if self.kind == "bwrap":
            args = _bwrap_args(self.prefix, scratch, tmp_bytes if self.tmp_sized else 0)
            return [*args, "--", *argv], scratch
        if self.kind == "unshare":
            # Mount /tmp while still privileged inside, then drop every capability for good.
            mount = "mode=1777" + (f",size={tmp_bytes}" if tmp_bytes > 0 else "")
            drop = [self.setpriv, "--no-new-privs", "--inh-caps=-all", "--bounding-set=-all"]
            inside_tmp = _inside(str(scratch.resolve()), "/tmp")
            under = [p for p in python_paths() if _inside(p, "/tmp")] if python else []
            shell = ["/bin/sh", "-c", _MOUNT_TMP, "sh", mount, str(scratch) if inside_tmp else ""]
            return [*self.prefix, *shell, *under, "--", *drop, "--", *argv], scratch
        return list(argv), scratch


NO_SANDBOX = Sandbox("none")
# The tmpfs hides whatever was under /tmp; what the worker needs from there is bound back at the
# same path: first the Python installation's folders ($3... up to "--"), from the old /tmp kept
# open as descriptor 3; then a scratch folder there ($2: a test's, or GPTOSS_LOCAL_HOME under
# /tmp) from the working folder, which still is the old one (/proc/self/cwd, not resolved to its
# path, which now names a folder in the tmpfs), so the path the model is told works. Python's
# folders are bound as they are: unshare confines no files, so neither are they elsewhere.
_MOUNT_TMP = """\
exec 3</tmp && mount -t tmpfs -o "$1" tmpfs /tmp || exit 1
scratch=$2 && shift 2
while [ "$1" != -- ]; do
  mkdir -p "$1" && mount --no-canonicalize --bind "/proc/self/fd/3${1#/tmp}" "$1" || {
    echo "gptoss-local: Python is installed under /tmp ($1), and it cannot be shown inside the \
sandbox's own /tmp: install Python elsewhere, or set GPTOSS_LOCAL_SANDBOX=none" >&2; exit 1; }
  shift
done
exec 3<&- && shift
if [ -n "$scratch" ]; then mkdir -p "$scratch" &&
  mount --no-canonicalize --bind /proc/self/cwd "$scratch" || exit 1; fi
exec "$@"
"""


def detect() -> Sandbox:
    """The best sandbox that works here (probed once per process), or the one
    ``GPTOSS_LOCAL_SANDBOX`` asks for.

    Raises:
        ToolsError: The variable names an unknown sandbox, or one that does not work here.
    """
    wanted = os.environ.get(SANDBOX_ENV, "").strip().lower()
    if wanted == "none":
        return NO_SANDBOX
    if wanted and wanted not in ("bwrap", "unshare"):
        raise ToolsError(
            _("{variable}={value}: choose bwrap, unshare or none").format(
                variable=SANDBOX_ENV, value=repr(wanted)
            )
        )
    found = _working(wanted or None)
    if found is None:
        if wanted:
            raise ToolsError(
                _(
                    "{variable}={value}, but {value} does not work here (is it installed, "
                    "and may this user create namespaces?); unset it to use what works"
                ).format(variable=SANDBOX_ENV, value=wanted)
            )
        return NO_SANDBOX
    return found


@functools.cache
def _working(only: str | None) -> Sandbox | None:
    if not sys.platform.startswith("linux"):
        return None
    bwrap = shutil.which("bwrap")
    if only in (None, "bwrap") and bwrap:
        probe = [bwrap, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/"]
        for sized in (True, False):  # --size came with bubblewrap 0.5
            tmp = ["--size", "1048576", "--tmpfs", "/tmp"] if sized else ["--tmpfs", "/tmp"]
            if _runs([*probe, *tmp, "true"]):
                return Sandbox("bwrap", (bwrap,), True, True, own_processes=True, tmp_sized=sized)
    unshare, setpriv = shutil.which("unshare"), shutil.which("setpriv")
    if only in (None, "unshare") and unshare and setpriv:
        pid = ("--pid", "--fork", "--kill-child", "--mount-proc")
        for user in ((), ("--map-root-user",)):
            found = Sandbox("unshare", (unshare, "--net", *user, *pid, "--"), True,
                            own_processes=True, tmp_sized=True, setpriv=setpriv)  # fmt: skip
            if _runs(found.command(["true"], Path("/"), 1 << 20, python=False)[0]):
                return found
    return None


def _runs(argv: list[str]) -> bool:
    try:
        done = subprocess.run(argv, capture_output=True, timeout=_PROBE_SECONDS, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def _bwrap_args(bwrap: tuple[str, ...], scratch: Path, tmp_bytes: int) -> list[str]:
    args = [*(bwrap or ("bwrap",)), "--unshare-all", "--die-with-parent", "--new-session"]
    args += ["--proc", "/proc", "--dev", "/dev"]
    args += [*(["--size", str(tmp_bytes)] if tmp_bytes > 0 else []), "--tmpfs", "/tmp"]
    for path in SYSTEM_PATHS:
        args += ["--ro-bind-try", path, path]
    for path in python_paths():
        args += ["--ro-bind", path, path]
    args += ["--bind", str(scratch), MODEL_FOLDER, "--chdir", MODEL_FOLDER]
    return args


def python_paths() -> list[str]:
    """The folders this Python installation lives in (its prefixes, its standard library,
    libpython, its site-packages and the interpreter's real folder), outermost only, leaving out
    what the system paths cover."""
    found = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    found |= set(site.getsitepackages())
    found |= {sysconfig.get_paths()[name] for name in ("stdlib", "platstdlib")}
    found.add(sysconfig.get_config_var("LIBDIR") or sys.base_prefix)  # libpython
    found.add(str(Path(sys.executable).resolve().parent))
    found |= {str(Path(p).resolve()) for p in list(found)}
    kept: list[str] = []
    for path in sorted(p for p in found if Path(p).is_dir() and Path(p) != Path("/")):
        if not any(_inside(path, outer) for outer in (*kept, "/usr")):
            kept.append(path)
    return kept


def _inside(path: str, outer: str) -> bool:
    return Path(path) == Path(outer) or Path(outer) in Path(path).parents
