"""scripts/extract_messages.py and scripts/compile_messages.py parse their command lines:
`--help` prints the usage and writes nothing (it once wrote the template to a file named
`--help`), an unknown word is an error, and the defaults still work."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
SCRIPTS = ROOT / "scripts"


def _script(name: str):
    spec = importlib.util.spec_from_file_location(f"{name}_cli", SCRIPTS / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def _run(name: str, *argv: str, cwd: Path) -> subprocess.CompletedProcess:
    command = [sys.executable, str(SCRIPTS / f"{name}.py"), *argv]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("name", ["extract_messages", "compile_messages"])
def test_help_prints_the_usage_and_writes_nothing(name: str, tmp_path: Path) -> None:
    done = _run(name, "--help", cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.startswith("usage:"), done.stderr
    assert list(tmp_path.iterdir()) == []
    wrong = _run(name, "--bogus", cwd=tmp_path)
    assert wrong.returncode == 2 and "unrecognized arguments: --bogus" in wrong.stderr
    assert list(tmp_path.iterdir()) == []


def test_extract_writes_where_output_says_and_takes_no_bare_path(tmp_path: Path) -> None:
    assert _run("extract_messages", "stray.pot", cwd=tmp_path).returncode == 2
    assert list(tmp_path.iterdir()) == []
    done = _run("extract_messages", "--output", "out/messages.pot", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "out" / "messages.pot").read_text(encoding="utf-8")
    assert text.startswith("# Catalog template of gptoss-local")


def test_extract_writes_the_default_template_without_arguments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    extractor = _script("extract_messages")
    default = tmp_path / "locale" / "gptoss_local.pot"
    monkeypatch.setattr(extractor, "DEFAULT_OUTPUT", default)
    monkeypatch.setattr(extractor, "ROOT", tmp_path)  # the help names it relative to ROOT
    assert extractor.main([]) == 0
    assert 'msgid "Chat deleted."' in default.read_text(encoding="utf-8")


def test_compile_check_finds_the_committed_catalogs_current(tmp_path: Path) -> None:
    done = _run("compile_messages", "--check", cwd=tmp_path)
    assert done.returncode == 0 and done.stdout == "", done.stdout + done.stderr
