"""The tiers (tests/tiers.py): a test gets `terminal` or `clients` from what it uses, whatever
file it is in, and a marker not registered in pyproject.toml fails the run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FILES = ("tests/serve/test_serve_http.py", "tests/serve/test_serve_hostile_process.py",
         "tests/tui/test_tui_terminal.py", "tests/compat/test_node_openai.py")  # fmt: skip


# Prints each collected test's tiers (one subprocess for every check below).
REPORT = """
def pytest_collection_finish(session):
    for item in session.items:
        tiers = sorted({m.name for m in item.iter_markers()} & {"slow", "terminal", "clients"})
        print("TIERS", item.name, *tiers)
"""


def tiers_of(tmp_path: Path, *files: str) -> dict[str, set[str]]:
    """Each test of `files` and the tiers its collection gave it."""
    (tmp_path / "tiers_report.py").write_text(REPORT)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)])}
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-s",
                           "-p", "tiers_report", "-p", "no:cacheprovider", *files], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [line.split()[1:] for line in done.stdout.splitlines() if line.startswith("TIERS ")]
    return {name: set(tiers) for name, *tiers in rows}


def test_a_test_is_a_terminal_or_clients_one_by_what_it_uses(tmp_path: Path) -> None:
    tiers = tiers_of(tmp_path, *FILES)
    assert tiers["test_chat_in_a_real_terminal"] == {"terminal"}  # terminal_helpers: tmux
    assert tiers["test_a_key_is_required_when_set"] == {"clients"}  # the openai package
    assert tiers["test_the_command_serves_and_stops_cleanly_on_a_signal"] == {"clients"}
    assert tiers["test_streaming"] == {"clients"}  # tests/compat: node's openai package
    assert tiers["test_bad_requests_get_openai_style_errors"] == set()  # raw HTTP only
    assert tiers["test_sigterm_ends_serve_within_seconds_mid_request"] == {"slow"}  # small_gguf


def test_a_marker_not_registered_fails_the_run(tmp_path: Path) -> None:
    (tmp_path / "test_typo.py").write_text(
        "import pytest\n\n@pytest.mark.slwo\ndef test_x():\n    pass\n"
    )
    done = subprocess.run([sys.executable, "-m", "pytest", "-c", str(REPO / "pyproject.toml"),
                           "--rootdir", str(tmp_path), "-p", "no:cacheprovider", "-q",
                           str(tmp_path)], capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode != 0 and "'slwo' not found in `markers`" in done.stdout
