"""`gptoss-local codex` and a `gptoss-local.config.toml` the user wrote in ~/.codex: the user's
bytes are kept in a copy beside it (never over an earlier copy) and the user is told where; the
profile gptoss-local wrote itself is replaced silently."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from gptoss_local.agents.codex import AGENT
from gptoss_local.agents.codex_profile import HEADER, PROFILE, Served, write_profile
from gptoss_local.commands.launch import run_agent

SERVED = Served("http://127.0.0.1:8080/v1", "gpt-oss-20b", 65_536)
USERS = b'# my own profile\nmodel = "o3"\n[model_providers.mine]\nbase_url = "http://x"\n'


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A real home folder for Codex's ~/.codex, and a `codex` that records the profile it got."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    program = tmp_path / "codex"
    program.write_text(f'#!/bin/sh\ncat "$HOME/.codex/{PROFILE}.config.toml" > "$HOME/seen"\n')
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return tmp_path


def _run_codex(home: Path) -> None:
    assert run_agent(AGENT, str(home / "codex"), SERVED, []) == 0


def test_the_users_own_profile_is_kept_and_the_user_told(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = home / ".codex"
    folder.mkdir()
    mine = folder / f"{PROFILE}.config.toml"
    mine.write_bytes(USERS)
    os.chmod(mine, 0o600)
    _run_codex(home)
    (backup,) = folder.glob(f"{PROFILE}.config.toml.bak-*")
    assert backup.read_bytes() == USERS and stat.S_IMODE(backup.stat().st_mode) == 0o600
    assert (home / "seen").read_text().startswith(HEADER)  # Codex got ours
    told = capsys.readouterr().err
    assert str(backup) in told and "was not written by gptoss-local" in told

    mine.write_bytes(USERS + b"# changed again\n")  # the user writes another one
    _run_codex(home)
    kept = sorted(p.read_bytes() for p in folder.glob(f"{PROFILE}.config.toml.bak-*"))
    assert kept == sorted([USERS, USERS + b"# changed again\n"])  # the first copy is intact


def test_our_own_profile_is_rewritten_silently(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _run_codex(home)
    _run_codex(home)
    folder = home / ".codex"
    assert not list(folder.glob("*.bak-*")) and not capsys.readouterr().err
    assert (folder / f"{PROFILE}.config.toml").read_text().startswith(HEADER)


def test_copies_made_in_the_same_second_never_overwrite_each_other(tmp_path: Path) -> None:
    path = tmp_path / f"{PROFILE}.config.toml"
    for n in range(3):
        path.write_bytes(USERS + bytes([65 + n]))
        assert write_profile(SERVED, tmp_path).backup is not None
    kept = {p.read_bytes() for p in tmp_path.glob("*.bak-*")}
    assert kept == {USERS + b"A", USERS + b"B", USERS + b"C"}
