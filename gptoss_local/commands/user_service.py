"""`gptoss-local service install|uninstall`: `serve` on loopback as a user service.

On Linux a systemd user unit (`~/.config/systemd/user/gptoss-local.service`, restarted on
failure) runs the installed `gptoss-local serve --load on-demand`; its key, if any, is kept in a
0600 file of the config folder that the unit reads, never in the unit. `systemctl --user` is run
when there is one, else its commands are printed. On Windows the command says which scheduled
task would start it at logon. What the machine offers (platform, home, `systemctl`) comes in a
`Machine`, so tests inject another.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from gptoss_local import paths
from gptoss_local.errors import UserError
from gptoss_local.i18n import _
from gptoss_local.paths import HOME_ENV
from gptoss_local.serve.find_engine import find_engine

UNIT = "gptoss-local.service"
KEY_FILE = "service.env"
TASK = "gptoss-local"


@dataclass(frozen=True)
class Machine:
    """What the command needs of this machine."""

    platform: str = sys.platform
    home: Path = field(default_factory=Path.home)
    which: Callable[[str], str | None] = shutil.which
    run: Callable[[list[str]], int] = lambda argv: subprocess.run(argv, check=False).returncode

    def unit_dir(self) -> Path:
        """Where systemd looks for this user's units."""
        config = os.environ.get("XDG_CONFIG_HOME") or str(self.home / ".config")
        return Path(config) / "systemd" / "user"


def run_service(args: argparse.Namespace, machine: Machine | None = None) -> int:
    """Install or uninstall the service; exit 0 when done (or printed for the user to do)."""
    machine = machine or Machine()
    if machine.platform.startswith("win"):
        return _windows(args, machine)
    if not machine.platform.startswith("linux"):
        raise UserError(
            _("`gptoss-local service` knows systemd (Linux) and Windows only"),
            _("Start `gptoss-local serve --load on-demand` at login yourself."),
        )
    if args.service_command == "install":
        return _install(args, machine)
    return _uninstall(machine)


def serve_argv(machine: Machine, port: int, keep_alive: float) -> list[str]:
    """The command the service runs: the installed `gptoss-local`, else this Python's module."""
    found = machine.which("gptoss-local")
    program = [found] if found else [sys.executable, "-m", "gptoss_local"]
    return [*program, "serve", "--host", "127.0.0.1", "--port", str(port),
            "--load", "on-demand", "--keep-alive", f"{keep_alive:g}"]  # fmt: skip


def unit_text(argv: list[str], key_file: Path) -> str:
    """The systemd user unit that runs `argv`."""
    home = os.environ.get(HOME_ENV, "").strip()
    environment = f'Environment="{HOME_ENV}={_escaped(home)}"\n' if home else ""
    return (
        "[Unit]\n"
        "Description=gptoss-local engine (serve on loopback)\n\n"
        "[Service]\n"
        "Type=simple\n"
        f"ExecStart={' '.join(_quoted(a) for a in argv)}\n"
        f"{environment}"
        f"EnvironmentFile=-{_quoted(str(key_file))}\n"
        "Restart=on-failure\n"
        "RestartSec=5\n"
        # 2: refused (another engine runs, bad settings): starting again would change nothing.
        "RestartPreventExitStatus=2\n\n"
        "[Install]\n"
        "WantedBy=default.target\n"
    )


def _install(args: argparse.Namespace, machine: Machine) -> int:
    key = args.api_key or os.environ.get("GPTOSS_LOCAL_API_KEY") or None
    key_file = paths.config_dir() / KEY_FILE
    if key:
        _write_private(key_file, f"GPTOSS_LOCAL_API_KEY={key}\n")
    else:
        key_file.unlink(missing_ok=True)
    unit = paths.ensure_dir(machine.unit_dir(), 0o755) / UNIT
    unit.write_text(unit_text(serve_argv(machine, args.port, args.keep_alive), key_file),
                    encoding="utf-8")  # fmt: skip
    print(_("wrote {path}").format(path=unit), file=sys.stderr)
    steps = [["systemctl", "--user", "daemon-reload"],
             ["systemctl", "--user", "enable", "--now", UNIT]]  # fmt: skip
    running = find_engine()
    if running is not None:  # the service's serve gives way to it (exit 2, not restarted)
        print(_("an engine runs already (PID {pid}): the service starts at the next login, or "
                "after `gptoss-local stop` with `systemctl --user start {unit}`").format(
                    pid=running.record.pid, unit=UNIT), file=sys.stderr)  # fmt: skip
    return _systemctl(machine, steps)


def _uninstall(machine: Machine) -> int:
    unit = machine.unit_dir() / UNIT
    code = 0
    if unit.exists():
        code = _systemctl(machine, [["systemctl", "--user", "disable", "--now", UNIT]])
        unit.unlink()
        _systemctl(machine, [["systemctl", "--user", "daemon-reload"]])
        print(_("removed {path}").format(path=unit), file=sys.stderr)
    else:
        print(_("no user service is installed ({path} does not exist)").format(path=unit),
              file=sys.stderr)  # fmt: skip
    (paths.config_dir() / KEY_FILE).unlink(missing_ok=True)
    return code


def _systemctl(machine: Machine, steps: list[list[str]]) -> int:
    """Run the steps when there is a systemctl; else print them for the user."""
    if machine.which("systemctl") is None:
        print(_("systemctl is not here: run these yourself where systemd runs:"), file=sys.stderr)
        for step in steps:
            print("  " + " ".join(step), file=sys.stderr)
        return 0
    for step in steps:
        code = machine.run(step)
        if code != 0:
            raise UserError(_("`{command}` failed (exit {code})").format(
                command=" ".join(step), code=code),
                _("See `systemctl --user status {unit}` and `journalctl --user -u {unit}`."
                  ).format(unit=UNIT))  # fmt: skip
    return 0


def _windows(args: argparse.Namespace, machine: Machine) -> int:
    """Say which scheduled task would start the engine at logon (nothing is changed)."""
    if args.service_command == "uninstall":
        command = f"schtasks /Delete /TN {TASK} /F"
    else:
        argv = serve_argv(machine, args.port, args.keep_alive)
        line = subprocess.list2cmdline(argv)
        command = f"schtasks /Create /TN {TASK} /SC ONLOGON /RL LIMITED /TR {_win_quoted(line)}"
    print(_("on Windows this is a scheduled task; nothing was changed. To do it, run:"),
          file=sys.stderr)  # fmt: skip
    print(command)
    return 0


def _write_private(path: Path, text: str) -> None:
    paths.ensure_dir(path.parent)
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)


def _escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _quoted(word: str) -> str:
    """A word of a unit's command line, quoted when it needs to be (systemd's rules)."""
    if word and not any(c in word for c in " \t\"\\'$%;"):
        return word
    return f'"{_escaped(word).replace("%", "%%").replace("$", "$$")}"'


def _win_quoted(line: str) -> str:
    return '"' + line.replace('"', '\\"') + '"'
