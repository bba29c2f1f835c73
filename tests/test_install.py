"""Install the built wheel with pipx, the way users do, and run the installed command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Build the wheel and pipx-install it into a private PIPX_HOME; yields the folders."""
    base = tmp_path_factory.mktemp("pipx")
    dist, pipx_home, bin_dir = base / "dist", base / "home", base / "bin"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(ROOT)],
        check=True,
    )
    (wheel,) = dist.glob("gptoss_local-*.whl")
    # Same dependency versions as this environment: reuses pip's cached llama-cpp-python build.
    constraints = base / "constraints.txt"
    frozen = subprocess.run(
        [sys.executable, "-m", "pip", "freeze", "--exclude-editable"],
        check=True,
        capture_output=True,
        text=True,
    )
    constraints.write_text(frozen.stdout)
    env = {**os.environ, "PIPX_HOME": str(pipx_home), "PIPX_BIN_DIR": str(bin_dir)}
    env.pop("PIP_REQUIRE_VIRTUALENV", None)
    subprocess.run(
        [
            *(sys.executable, "-m", "pipx", "install", "--python", sys.executable),
            *("--pip-args", f"--constraint {constraints}", str(wheel)),
        ],
        check=True,
        env=env,
        capture_output=True,
    )
    return {"bin": bin_dir, "venv": pipx_home / "venvs" / "gptoss-local"}


def run_installed(
    installed: dict[str, Path], tmp_path: Path, *argv: str
) -> subprocess.CompletedProcess:
    env = {**os.environ, "GPTOSS_LOCAL_HOME": str(tmp_path / "home")}
    command = [str(installed["bin"] / "gptoss-local"), *argv]
    return subprocess.run(
        command, capture_output=True, text=True, env=env, check=True, cwd=tmp_path
    )


def test_installed_version_and_doctor(installed: dict[str, Path], tmp_path: Path) -> None:
    from gptoss_local import __version__

    assert (
        run_installed(installed, tmp_path, "--version").stdout.strip()
        == f"gptoss-local {__version__}"
    )
    doc = json.loads(run_installed(installed, tmp_path, "doctor", "--json").stdout)
    assert set(doc) == {"gpus", "ram", "disk", "engine", "plan"}
    assert doc["engine"]["llama_cpp"]["installed"] is True
    assert doc["plan"]["model"] in ("gpt-oss-20b", "gpt-oss-120b", None)


def test_manifest_is_read_from_inside_the_installed_wheel(
    installed: dict[str, Path], tmp_path: Path
) -> None:
    python = installed["venv"] / ("Scripts" if os.name == "nt" else "bin") / "python"
    code = "import gptoss_local.catalog as c; print(c.manifest_path()); print(len(c.load().models))"
    done = subprocess.run(
        [str(python), "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    path, count = done.stdout.split()
    assert Path(path).is_relative_to(installed["venv"]) and "site-packages" in path
    assert int(count) == 2
