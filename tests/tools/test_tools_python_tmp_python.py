"""The python tool with gptoss-local itself installed under /tmp (a virtual environment there):
the unshare sandbox covers /tmp with a tmpfs of its own, which hid the interpreter ("setpriv:
failed to execute …/bin/python3"). The worker runs the parent's interpreter, so it must start
there, and still not see gptoss-local's environment. Driven as a user meets it: `tools call
python` through the virtual environment's own interpreter.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from gptoss_local.tools import sandbox as sandboxes
from gptoss_local.tools.errors import ToolsError
from gptoss_local.tools.python_session import PythonSession

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux sandboxes")
SECRET = "sk-" + uuid.uuid4().hex  # in gptoss-local's environment, never the worker's
READ_ENVIRONS = (
    "import os, sys\n"
    "seen = []\n"
    "for pid in [p for p in os.listdir('/proc') if p.isdigit()] + [str(os.getppid())]:\n"
    "    try:\n"
    "        data = open(f'/proc/{pid}/environ', 'rb').read()\n"
    "    except OSError:\n"
    "        continue\n"
    f"    seen += [pid] if b{SECRET!r} in data else []\n"
    "print(sys.prefix)\n"
    "print('found' if seen else 'hidden')\n"
)


@pytest.fixture(scope="module")
def tmp_python() -> Iterator[Path]:
    """A virtual environment in /tmp itself (whatever TMPDIR says) that sees this one's
    packages: its interpreter runs gptoss-local from there."""
    folder = Path(tempfile.mkdtemp(prefix="gptoss-venv-", dir="/tmp"))
    try:
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
        python = folder / "bin" / "python"
        probe = [str(python), "-c", "import site; print(site.getsitepackages()[0])"]
        packages = Path(subprocess.run(probe, capture_output=True, text=True).stdout.strip())
        ours = [*site.getsitepackages(), *os.environ.get("PYTHONPATH", "").split(os.pathsep)]
        (packages / "parent.pth").write_text("\n".join(p for p in ours if p) + "\n")
        yield python
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _call(python: Path, kind: str, home: Path, code: str) -> dict[str, object]:
    if sandboxes._working(kind) is None:
        pytest.skip(f"{kind} is not installed, or this kernel or user may not create namespaces")
    env = {**os.environ, "GPTOSS_LOCAL_SANDBOX": kind, "GPTOSS_SECRET_KEY": SECRET,
           "GPTOSS_LOCAL_HOME": str(home)}  # fmt: skip
    argv = [str(python), "-m", "gptoss_local", "tools", "call", "python"]
    done = subprocess.run([*argv, json.dumps({"code": code}), "--json"], capture_output=True,
                          text=True, env=env, timeout=120)  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("kind", ["unshare", "bwrap"])
def test_a_python_under_tmp_starts_and_hides_the_parents_environment(
    tmp_python: Path, kind: str, isolated_home: Path
) -> None:
    record = _call(tmp_python, kind, isolated_home, READ_ENVIRONS)
    assert not record["error"], record
    assert str(record["content"]).splitlines() == [str(tmp_python.parent.parent), "hidden"]


@pytest.mark.parametrize("kind", ["unshare", "bwrap"])
def test_the_scratch_folder_still_works_beside_it(
    tmp_python: Path, kind: str, isolated_home: Path
) -> None:
    code = "import os\nopen(os.path.join(os.environ['HOME'], 'beside.txt'), 'w').write('kept')"
    record = _call(tmp_python, kind, isolated_home, code)
    assert not record["error"], record
    (written,) = isolated_home.rglob("beside.txt")
    assert written.read_text() == "kept"


def test_a_python_folder_that_cannot_be_bound_is_refused_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder of the installation that is gone by the time the sandbox starts (it cannot be
    bound): the tool does not start, and says why and what to do."""
    found = sandboxes._working("unshare")
    if found is None:
        pytest.skip("unshare is not installed, or this kernel or user may not create namespaces")
    gone = f"/tmp/gptoss-gone-{uuid.uuid4().hex}"
    real = sandboxes.python_paths()
    monkeypatch.setattr(sandboxes, "python_paths", lambda: [*real, gone])
    session = PythonSession(tmp_path / "s", sandbox=found)
    try:
        with pytest.raises(ToolsError, match=rf"installed under /tmp \({gone}\).*"
                           "GPTOSS_LOCAL_SANDBOX=none"):  # fmt: skip
            session.run("1 + 1")
    finally:
        session.close()


def test_bwrap_is_started_by_the_path_it_was_found_at() -> None:
    """The worker's PATH is a fixed clean one, not this process's: a bwrap found elsewhere on
    this PATH (a private install) must be started by its full path."""
    found = sandboxes._working("bwrap")
    if found is None:
        pytest.skip("bwrap is not installed, or this kernel refuses its namespaces")
    command, _ = found.command(["true"], Path("/"))
    assert command[0] == shutil.which("bwrap") and os.path.isabs(command[0])
