"""`gptoss-local service install|uninstall` (`commands/user_service.py`) in a temporary home:
the systemd user unit and its key file, `systemctl --user` run when there is one (a recording
stand-in here: starting a real user service is the machine's, not a test's) and printed when
there is none, and on Windows (injected) the scheduled task it would create."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from gptoss_local.commands.user_service import Machine, run_service
from gptoss_local.errors import UserError
from gptoss_local.serve.runtime_file import EngineRecord, claim

Cli = Callable[..., tuple[int, str, str]]


def install_args(**given: object) -> argparse.Namespace:
    values = {"service_command": "install", "port": 8080, "keep_alive": 300.0, "api_key": None}
    return argparse.Namespace(**{**values, **given})


class Systemctl:
    """A systemctl stand-in: records each call, answers `code`."""

    def __init__(self, code: int = 0) -> None:
        self.calls: list[list[str]] = []
        self.code = code

    def __call__(self, argv: list[str]) -> int:
        self.calls.append(argv)
        return self.code


def linux(home: Path, systemctl: Systemctl | None = None) -> Machine:
    def which(name: str) -> str | None:
        return "/usr/bin/systemctl" if name == "systemctl" and systemctl else None

    return Machine("linux", home, which, systemctl or Systemctl())


def unit_of(home: Path) -> str:
    return (home / ".config" / "systemd" / "user" / "gptoss-local.service").read_text()


def exec_start(unit: str) -> list[str]:
    line = next(x for x in unit.splitlines() if x.startswith("ExecStart="))
    return shlex.split(line.removeprefix("ExecStart="))


def test_install_writes_a_loopback_unit_and_prints_the_steps_without_systemctl(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Cli
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no systemctl, no gptoss-local
    code, _out, err = cli("service", "install", "--port", "8099", "--keep-alive", "10m")
    assert code == 0, err
    unit = unit_of(tmp_path)
    assert exec_start(unit) == [sys.executable, "-m", "gptoss_local", "serve", "--host",
                                "127.0.0.1", "--port", "8099", "--load", "on-demand",
                                "--keep-alive", "600"]  # fmt: skip
    assert "Restart=on-failure" in unit and "WantedBy=default.target" in unit
    assert "RestartPreventExitStatus=2" in unit  # refused (an engine runs): no restart loop
    assert "GPTOSS_LOCAL_HOME=" in unit  # the same data folder as the commands that find it
    assert "systemctl --user enable --now gptoss-local.service" in err


def test_the_key_goes_to_a_private_file_not_the_unit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_home: Path
) -> None:
    monkeypatch.setenv("GPTOSS_LOCAL_API_KEY", "s3cret")
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    assert run_service(install_args(), linux(tmp_path)) == 0
    unit = unit_of(tmp_path)
    key_file = isolated_home / "config" / "service.env"
    assert "s3cret" not in unit and f"EnvironmentFile=-{key_file}" in unit
    assert key_file.read_text() == "GPTOSS_LOCAL_API_KEY=s3cret\n"
    assert key_file.stat().st_mode & 0o777 == 0o600


def test_install_and_uninstall_run_systemctl_when_there_is_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    systemctl = Systemctl()
    assert run_service(install_args(api_key="k"), linux(tmp_path, systemctl)) == 0
    enable = ["systemctl", "--user", "enable", "--now", "gptoss-local.service"]
    assert systemctl.calls == [["systemctl", "--user", "daemon-reload"], enable]
    systemctl.calls.clear()
    uninstall = argparse.Namespace(service_command="uninstall")
    assert run_service(uninstall, linux(tmp_path, systemctl)) == 0
    assert systemctl.calls == [["systemctl", "--user", "disable", "--now", "gptoss-local.service"],
                               ["systemctl", "--user", "daemon-reload"]]  # fmt: skip
    assert not (tmp_path / ".config" / "systemd" / "user" / "gptoss-local.service").exists()


def test_a_failing_systemctl_says_where_to_look(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    with pytest.raises(UserError, match=r"failed \(exit 1\)") as refused:
        run_service(install_args(), linux(tmp_path, Systemctl(code=1)))
    assert "journalctl --user -u gptoss-local.service" in str(refused.value.hint)


def test_on_windows_it_says_which_task_would_do_it_and_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def which(name: str) -> str | None:
        return r"C:\Tools\gptoss-local.exe" if name == "gptoss-local" else None

    def refuse(argv: list[str]) -> int:
        raise AssertionError(f"ran {argv}")

    machine = Machine("win32", tmp_path, which, refuse)
    assert run_service(install_args(), machine) == 0
    out, err = capsys.readouterr()
    assert out.startswith("schtasks /Create /TN gptoss-local /SC ONLOGON /RL LIMITED /TR ")
    assert r'/TR "C:\Tools\gptoss-local.exe serve --host 127.0.0.1 --port 8080' in out
    assert "nothing was changed" in err
    assert list(tmp_path.iterdir()) == []
    assert run_service(argparse.Namespace(service_command="uninstall"), machine) == 0
    assert capsys.readouterr().out == "schtasks /Delete /TN gptoss-local /F\n"


def test_install_beside_a_running_engine_says_when_the_service_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    claim(EngineRecord("", os.getpid(), "tiny", None))  # an engine (starting) of this user
    assert run_service(install_args(), linux(tmp_path)) == 0
    err = capsys.readouterr().err
    assert f"an engine runs already (PID {os.getpid()})" in err
    assert "systemctl --user start gptoss-local.service" in err
