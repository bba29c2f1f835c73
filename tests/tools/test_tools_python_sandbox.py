"""The python tool's sandbox against hostile code, driven as a user meets it: `gptoss-local tools
call python` through the installed command, with GPTOSS_LOCAL_SANDBOX picking the sandbox.

Each test names what it holds against: code that reads gptoss-local's environment through
/proc, processes that fork twice and leave their session to outlive the call, a fork loop, and a
/tmp filled past the memory limit.
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from installed_cli import gptoss

from gptoss_local.tools import pids_group, python_session
from gptoss_local.tools import sandbox as sandboxes
from gptoss_local.tools.python_session import PROCESS_LIMIT, PythonSession
from gptoss_local.tools.sandbox import NO_SANDBOX

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux sandboxes")
KINDS = ["bwrap", "unshare", "none"]


def _call(kind: str, home: Path, code: str, **settings: int) -> tuple[dict[str, object], float]:
    """`tools call python` with `code` in sandbox `kind`: the JSON record and the seconds taken."""
    if kind != "none" and sandboxes._working(kind) is None:
        pytest.skip(f"{kind} does not work here")
    config = home / "config" / "settings.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("".join(f"{key} = {value}\n" for key, value in settings.items()))
    started = time.monotonic()
    done = gptoss("tools", "call", "python", json.dumps({"code": code}), "--json",
                  env={"GPTOSS_LOCAL_SANDBOX": kind, "GPTOSS_SECRET_KEY": SECRET})  # fmt: skip
    took = time.monotonic() - started
    assert 'Traceback (most recent call last):\n  File "/' not in done.stderr, done.stderr
    return json.loads(done.stdout), took


SECRET = "sk-" + uuid.uuid4().hex  # in gptoss-local's own environment, never the worker's
READ_ENVIRONS = (
    "import os\n"
    "seen = []\n"
    "for pid in [p for p in os.listdir('/proc') if p.isdigit()] + [str(os.getppid())]:\n"
    "    try:\n"
    "        data = open(f'/proc/{pid}/environ', 'rb').read()\n"
    "    except OSError:\n"
    "        continue\n"
    f"    seen += [pid] if b{SECRET!r} in data else []\n"
    "print('found' if seen else 'hidden')\n"
)


@pytest.mark.parametrize("kind", KINDS)
def test_the_code_cannot_read_gptoss_locals_environment(kind: str, isolated_home: Path) -> None:
    record, _ = _call(kind, isolated_home, READ_ENVIRONS)
    if kind == "none":  # same user, same /proc: nothing hides it, and the listing says so
        assert record["content"] == "found\n"
        listing = gptoss("tools", env={"GPTOSS_LOCAL_SANDBOX": "none"}).stdout
        assert "can read the environment of your processes, keys included" in listing
    else:
        assert record["content"] == "hidden\n", record


def _survivors(marker: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        if marker in " ".join(proc.info["cmdline"] or []):
            found.append(proc)
    return found


def _gone(marker: str, seconds: float = 10.0) -> bool:
    """Whether no process with `marker` is left (the kernel may need a moment to reap)."""
    deadline = time.monotonic() + seconds
    while _survivors(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _survivors(marker)


@pytest.fixture
def marker() -> Iterator[str]:
    """A word in the command line of the processes a test starts; any left are killed after."""
    word = f"gptoss-escape-{uuid.uuid4().hex}"
    yield word
    for proc in _survivors(word):
        proc.kill()


# Two grandchildren leave the session: one that execs (found again by its marker), and one that
# stays a copy of the worker, holding its pipes open (which made the call wait for it).
ESCAPE = (
    "import os, sys, time\n"
    "if os.fork() == 0:\n"
    "    os.setsid()\n"
    "    if os.fork() == 0:\n"
    "        os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(1000)',"
    " {marker!r}])\n"
    "    if os.fork() == 0:\n"
    "        time.sleep(40)\n"
    "        os._exit(0)\n"
    "    os._exit(0)\n"
    "time.sleep(0.5)\n"
)


@pytest.mark.parametrize("kind", KINDS)
def test_a_timeout_kills_processes_that_left_the_session(
    kind: str, isolated_home: Path, marker: str
) -> None:
    record, took = _call(kind, isolated_home, ESCAPE.format(marker=marker) + "time.sleep(60)",
                         python_timeout=5)  # fmt: skip
    assert record["error"] and "Timed out after 5 seconds" in str(record["content"])
    assert took < 15, f"a 5 s time limit took {took:.0f} s"
    assert _gone(marker), "a process of the code outlived the call"


@pytest.mark.parametrize("kind", KINDS)
def test_a_normal_call_leaves_nothing_running(kind: str, isolated_home: Path, marker: str) -> None:
    code = ESCAPE.format(marker=marker) + "print('done')"
    record, took = _call(kind, isolated_home, code)
    assert record["content"] == "done\n" and took < 15
    assert _gone(marker), "a process of the code outlived the gptoss-local command"


FORK_LOOP = (
    "import subprocess\n"
    "started = []\n"
    "try:\n"
    "    for _ in range(500):\n"
    "        started.append(subprocess.Popen(['sleep', '30']))\n"
    "except OSError as exc:\n"
    "    print('refused', type(exc).__name__)\n"
    "for proc in started:\n"
    "    proc.kill()\n"
    "    proc.wait()\n"
    "print('started', len(started))\n"
)


@pytest.mark.parametrize("kind", KINDS)
def test_the_number_of_processes_is_capped(kind: str, isolated_home: Path) -> None:
    record, _ = _call(kind, isolated_home, FORK_LOOP)
    lines = str(record["content"]).splitlines()
    started = int(lines[-1].split()[1])
    if os.getuid() != 0 or pids_group.possible():  # RLIMIT_NPROC, or a pids cgroup for root
        assert lines[0] == "refused BlockingIOError", lines
        assert started < PROCESS_LIMIT
    else:  # root without a pids cgroup: nothing caps it, and the note says so
        assert started == 500 and "processes: not enforced" in str(record["note"])


@pytest.mark.parametrize("kind", ["unshare", "none"])
def test_without_a_cgroup_the_keeper_still_ends_them(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, marker: str
) -> None:
    """An unprivileged user gets no cgroup: the worker's keeper (PID 1 of unshare's namespace,
    or a subreaper) is what finds the processes that left the session."""
    monkeypatch.setattr(python_session, "open_group", lambda limit: None)
    found = NO_SANDBOX if kind == "none" else sandboxes._working(kind)
    if found is None:
        pytest.skip(f"{kind} does not work here")
    session = PythonSession(tmp_path / "s", timeout=3, sandbox=found)
    try:
        started = time.monotonic()
        out = session.run(ESCAPE.format(marker=marker) + "time.sleep(60)")
        assert out.restarted and time.monotonic() - started < 10
        assert _gone(marker)
        assert session.run("1 + 1").text == "2\n"  # a fresh worker, still without a cgroup
        assert session._group is None
    finally:
        session.close()


FILL_TMP = (
    "import os, tempfile\n"
    "written = 0\n"
    "path = os.path.join(tempfile.gettempdir(), 'fill')\n"
    "try:\n"
    "    with open(path, 'wb') as out:\n"
    "        for _ in range(400):\n"
    "            out.write(b'x' * 2**20)\n"
    "            out.flush()\n"
    "            written += 1\n"
    "except OSError as exc:\n"
    "    print('refused', exc.errno == 28)\n"
    "finally:\n"
    "    os.remove(path)\n"
    "print('MiB', written)\n"
)


@pytest.mark.parametrize("kind", ["bwrap", "unshare"])
def test_tmp_counts_against_the_memory_limit(kind: str, isolated_home: Path) -> None:
    record, _ = _call(kind, isolated_home, FILL_TMP, python_memory_mb=256)
    lines = str(record["content"]).splitlines()
    assert lines[0] == "refused True", lines  # ENOSPC: the tmpfs is full
    assert int(lines[-1].split()[1]) <= 256


@pytest.mark.parametrize("kind", KINDS)
def test_the_scratch_folder_is_where_the_model_is_told(kind: str, isolated_home: Path) -> None:
    """The home here is under /tmp, which unshare now covers with a tmpfs of its own: the
    folder the description names must still be the real one."""
    code = "import os\nopen(os.path.join(os.environ['HOME'], 'abs.txt'), 'w').write('kept')"
    record, _ = _call(kind, isolated_home, code)
    assert not record["error"], record
    (written,) = isolated_home.rglob("abs.txt")
    assert written.read_text() == "kept"
