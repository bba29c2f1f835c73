"""Run the installed `gptoss-local` command (the console script beside this interpreter) the way a
user does, and check that a failure is a message, not a traceback. (`Cli` is the type of the
`cli` fixture, which runs the command's `main` in the test's own process.)"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

Cli = Callable[..., tuple[int, str, str]]
SCRIPT = Path(sys.executable).parent / ("gptoss-local.exe" if os.name == "nt" else "gptoss-local")


def gptoss(
    *argv: str, stdin: bytes | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the installed command with this test's environment plus `env`; stdout/err as text."""
    assert SCRIPT.exists(), f"the console script is not installed at {SCRIPT}"
    done = subprocess.run(
        [str(SCRIPT), *argv],
        input=stdin if stdin is not None else b"",
        capture_output=True,
        env={**os.environ, **(env or {})},
        timeout=120,
    )
    out, err = (part.decode("utf-8", "replace") for part in (done.stdout, done.stderr))
    return subprocess.CompletedProcess(done.args, done.returncode, out, err)


def assert_refused(done: subprocess.CompletedProcess[str], *needles: str, code: int = 2) -> None:
    """Exit `code`, no traceback, and every needle in stderr."""
    assert "Traceback" not in done.stderr + done.stdout, done.stderr
    assert done.returncode == code, (done.returncode, done.stderr)
    for needle in needles:
        assert needle in done.stderr, (needle, done.stderr)


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """Make `folder` unwritable, even for root (tests run as root in CI): the immutable flag
    where chattr works, else mode 0555. Skips the test when neither takes effect."""
    chattr = shutil.which("chattr")
    if getattr(os, "geteuid", lambda: -1)() == 0 and chattr:
        flag = subprocess.run([chattr, "+i", str(folder)], capture_output=True)
        undo = [chattr, "-i", str(folder)]
    else:
        os.chmod(folder, 0o555)
        flag, undo = subprocess.CompletedProcess([], 0), []
    try:
        probe = folder / ".write-probe"
        try:
            probe.touch()
        except OSError:
            pass
        else:
            probe.unlink()
            pytest.skip("cannot make a folder read-only here")
        if flag.returncode:
            pytest.skip(f"chattr failed: {flag.stderr!r}")
        yield
    finally:
        if undo:
            subprocess.run(undo, check=False)
        else:
            os.chmod(folder, 0o755)
