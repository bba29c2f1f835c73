"""Paths and settings: one relocation variable, nothing created on import, atomic writes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gptoss_local import config, paths
from gptoss_local.config import Settings, SettingsError


def test_home_override_relocates_everything(isolated_home: Path) -> None:
    for folder in (
        paths.config_dir(),
        paths.data_dir(),
        paths.models_dir(),
        paths.logs_dir(),
    ):
        assert isolated_home in folder.parents
    assert paths.settings_file().parent == paths.config_dir()


def test_platform_folders_without_override(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("GPTOSS_LOCAL_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    assert paths.config_dir() == tmp_path / "xdg-config" / "gptoss-local"
    assert paths.models_dir().parent == paths.data_dir()


def test_importing_and_asking_for_paths_creates_nothing(tmp_path: Path) -> None:
    home = tmp_path / "fresh"
    code = (
        "import gptoss_local.cli, gptoss_local.config as c, gptoss_local.paths as p;"
        "import gptoss_local.plan.planner;"
        "p.models_dir(); p.settings_file(); c.load()"
    )
    env = {**os.environ, "GPTOSS_LOCAL_HOME": str(home)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    assert not home.exists()


def test_missing_settings_file_gives_defaults() -> None:
    assert config.load() == Settings()


def test_save_then_load_round_trips_and_is_private(isolated_home: Path) -> None:
    wanted = Settings(
        backend="ollama", model="120b", context=32_768, effort="high", source="modelscope"
    )
    path = config.save(wanted)
    assert config.load() == wanted
    assert oct(path.parent.stat().st_mode & 0o777) == oct(0o700)
    assert [p.name for p in path.parent.iterdir()] == ["settings.toml"]  # no temporary left behind


def test_strings_with_quotes_and_newlines_survive(isolated_home: Path) -> None:
    odd = Settings(model='my "model"\nline', source="back\\slash")
    config.save(odd)
    assert config.load() == odd


def test_failed_write_keeps_the_old_file(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config.save(Settings(effort="low"))

    def full_disk(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(OSError, match="No space"):
        config.save(Settings(effort="high"))
    assert config.load().effort == "low"
    assert [p.name for p in paths.config_dir().iterdir()] == ["settings.toml"]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("effort = \n", "cannot read settings file"),
        ('colour = "blue"\n', "unknown setting(s) colour"),
        ('context = "big"\n', "'context' must be a whole number"),
        ('effort = "extreme"\n', "effort must be one of low, medium, high"),
        ('backend = "vllm"\n', "backend must be one of"),
        ("context = -5\n", "context must be"),
        ('allowed_tools = "python"\n', "'allowed_tools' must be a list of strings"),
        ("allowed_tools = [1]\n", "'allowed_tools' must be a list of strings"),
        ('allowed_tools = ["functions.x"]\n', "allowed_tools holds 'functions.x'"),
        ("max_tool_calls = 0\n", "max_tool_calls must be a whole number ≥ 1"),
        ("python_timeout = 0\n", "python_timeout must be"),
        ("python_memory_mb = 100\n", "python_memory_mb must be 0 (no limit) or at least 256"),
        ("python_timeout = true\n", "'python_timeout' must be a whole number"),
        ('engine_start = "always"\n', "engine_start must be one of off, background"),
    ],
)
def test_bad_settings_are_clear_errors(text: str, words: str) -> None:
    paths.ensure_dir(paths.config_dir())
    paths.settings_file().write_text(text)
    with pytest.raises(SettingsError) as caught:
        config.load()
    assert words in str(caught.value) and str(paths.settings_file()) in str(caught.value)


def test_tool_settings_round_trip(isolated_home: Path) -> None:
    wanted = Settings(allowed_tools=("python", "git__*"), max_tool_calls=4, python_timeout=60,
                      python_memory_mb=0)  # fmt: skip
    config.save(wanted)
    assert 'allowed_tools = ["python", "git__*"]' in paths.settings_file().read_text()
    assert config.load() == wanted
