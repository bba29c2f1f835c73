"""The python tool's worker, for real: a separate process, stateful, time- and memory-limited,
its output cut to size, and without network where the sandbox can take it away."""

from __future__ import annotations

import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gptoss_local.tools import sandbox as sandboxes
from gptoss_local.tools.python_session import HEAD_BYTES, TAIL_BYTES, PythonSession
from gptoss_local.tools.python_tool import PythonTool
from gptoss_local.tools.sandbox import NO_SANDBOX, Sandbox, detect

LINUX = sys.platform.startswith("linux")


def _found(kind: str) -> Sandbox | None:
    found = sandboxes._working(kind)
    return found if found is not None and found.kind == kind else None


BWRAP = _found("bwrap") if LINUX else None
UNSHARE = _found("unshare") if LINUX else None
needs_bwrap = pytest.mark.skipif(
    BWRAP is None, reason="bubblewrap is not installed, or this kernel refuses its namespaces"
)
needs_unshare = pytest.mark.skipif(
    UNSHARE is None, reason="unshare --net needs root or unprivileged user namespaces"
)
SANDBOXES = [
    pytest.param(BWRAP, id="bwrap", marks=needs_bwrap),
    pytest.param(UNSHARE, id="unshare", marks=needs_unshare),
    pytest.param(NO_SANDBOX, id="none"),
]


@pytest.fixture
def session(tmp_path: Path) -> Iterator[PythonSession]:
    found = PythonSession(tmp_path / "scratch", timeout=5)
    yield found
    found.close()


def test_state_persists_between_calls(session: PythonSession) -> None:
    first = session.run("import math\nx = 6 * 7\nprint('set')")
    assert (first.text, first.error) == ("set\n", False)
    assert session.run("x + 1").text == "43\n"  # the last expression is shown, as in Jupyter
    assert session.run("def double(n):\n    return 2 * n\n").text == ""
    assert session.run("double(x), math.floor(2.5)").text == "(84, 2)\n"


def test_errors_are_results_and_the_session_goes_on(session: PythonSession) -> None:
    session.run("kept = 'yes'")
    failed = session.run("def f():\n    return 1 / 0\nf()")
    assert failed.error and "ZeroDivisionError: division by zero" in failed.text
    assert 'File "<cell 2>", line 2, in f' in failed.text and "return 1 / 0" in failed.text
    assert "python_worker" not in failed.text  # only the model's own frames
    syntax = session.run("def broken(:")
    assert syntax.error and "SyntaxError" in syntax.text
    exited = session.run("import sys; sys.exit(3)")
    assert exited.error and "SystemExit: 3" in exited.text and not exited.restarted
    assert session.run("kept").text == "'yes'\n"


def test_output_of_subprocesses_and_stderr_is_captured(session: PythonSession) -> None:
    out = session.run("import os, sys\nprint('out')\nprint('err', file=sys.stderr)\n"
                      "os.system('echo from-shell')")  # fmt: skip
    assert out.text.splitlines() == ["out", "err", "from-shell", "0"]


def test_a_timeout_kills_and_restarts_the_session(tmp_path: Path) -> None:
    session = PythonSession(tmp_path / "s", timeout=1.5)
    try:
        session.run("x = 1")
        started = time.monotonic()
        out = session.run("while True:\n    pass")
        assert time.monotonic() - started < 10
        assert out.error and out.restarted
        assert "Timed out after 1.5 seconds" in out.text and "restarted" in out.text
        assert "variables, imports and definitions" in out.text
        lost = session.run("x")
        assert lost.error and "NameError" in lost.text  # a fresh session: the state is gone
    finally:
        session.close()


def test_cancel_stops_a_call(session: PythonSession) -> None:
    cancel = threading.Event()
    threading.Timer(0.5, cancel.set).start()
    out = session.run("import time\ntime.sleep(30)", cancel)
    assert out.restarted and "Stopped by the user" in out.text


def test_a_worker_that_dies_is_restarted(session: PythonSession) -> None:
    out = session.run("import os\nos._exit(7)")
    assert out.restarted and "exit code 7" in out.text
    assert session.run("1 + 1").text == "2\n"


@pytest.mark.skipif(sys.platform == "win32", reason="no address-space limit on Windows")
def test_memory_is_limited(tmp_path: Path) -> None:
    session = PythonSession(tmp_path / "s", memory_mb=512)
    try:
        out = session.run("block = bytearray(2 * 1024**3)")
        assert out.error and "MemoryError" in out.text and not out.restarted
        assert session.memory_limited is True
        assert session.run("len(bytearray(64 * 1024**2))").text == f"{64 * 1024**2}\n"
    finally:
        session.close()


def test_long_output_keeps_its_start_and_end(session: PythonSession) -> None:
    out = session.run("for i in range(100_000):\n    print(f'line {i}')")
    assert out.text.startswith("line 0\nline 1\n")
    assert out.text.endswith("line 99999\n")
    total = sum(len(f"line {i}\n") for i in range(100_000))
    assert out.cut_bytes == total - HEAD_BYTES - TAIL_BYTES
    assert f"[… {out.cut_bytes:,} bytes of output cut …]" in out.text
    assert len(out.text) < HEAD_BYTES + TAIL_BYTES + 100
    assert session.run("print('next call')").text == "next call\n"  # nothing left over


def test_the_tool_cuts_its_result_for_the_model(tmp_path: Path) -> None:
    tool = PythonTool(PythonSession(tmp_path / "s", timeout=5))
    try:
        out = tool.call({"code": "print('x' * 50_000)"})
        assert out.truncated and "characters cut" in out.content and len(out.content) < 13_000
        assert tool.call({"cod": "1"}).error
    finally:
        tool.close()


def test_the_code_works_in_its_scratch_folder_with_a_clean_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SECRET_TOKEN", "do-not-leak")
    session = PythonSession(tmp_path / "scratch", timeout=5)
    try:
        out = session.run("import os\nopen('made.txt', 'w').write('hi')\nsorted(os.environ)")
        assert "SECRET_TOKEN" not in out.text and "HOME" in out.text
        assert (tmp_path / "scratch" / "made.txt").read_text() == "hi"
    finally:
        session.close()


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP server on this computer's loopback that accepts connections."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
                conn.close()
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    server.close()


CONNECT = (
    "import socket\n"
    "try:\n"
    "    socket.create_connection(('127.0.0.1', {port}), timeout=3).close()\n"
    "    print('connected')\n"
    "except OSError as exc:\n"
    "    print('refused', type(exc).__name__)\n"
)
RESOLVE = (
    "import socket\n"
    "try:\n"
    "    socket.getaddrinfo('example.com', 443)\n"
    "    print('resolved')\n"
    "except OSError as exc:\n"
    "    print('no lookup', type(exc).__name__)\n"
)


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_network_is_off_where_the_sandbox_can_turn_it_off(
    sandbox: Sandbox, tmp_path: Path, listener: int
) -> None:
    session = PythonSession(tmp_path / "s", timeout=15, sandbox=sandbox)
    try:
        reached = session.run(CONNECT.format(port=listener)).text
        if sandbox.network_blocked:
            assert reached.startswith("refused")  # this computer's services are out of reach
            assert session.run(RESOLVE).text.startswith("no lookup")
        else:
            assert reached == "connected\n"  # honest: nothing stops it
    finally:
        session.close()


@needs_bwrap
def test_bwrap_confines_the_files(tmp_path: Path) -> None:
    assert BWRAP is not None
    secret = tmp_path / "secret.txt"  # a file of the user's, outside the scratch folder
    secret.write_text("private")
    session = PythonSession(tmp_path / "s", timeout=15, sandbox=BWRAP)
    try:
        out = session.run(
            "import os\nopen('/mnt/data/note.txt', 'w').write('kept')\n"
            f"print(os.getcwd(), os.path.exists({str(secret)!r}), os.path.exists('/mnt/data'))\n"
            "try:\n    open('/usr/evil', 'w')\n"
            "except OSError as exc:\n    print(type(exc).__name__)"
        )
        assert out.text.splitlines() == ["/mnt/data False True", "OSError"]
        assert (tmp_path / "s" / "note.txt").read_text() == "kept"
    finally:
        session.close()


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_the_description_says_what_is_enforced(sandbox: Sandbox, tmp_path: Path) -> None:
    tool = PythonTool(PythonSession(tmp_path / "s", timeout=30, sandbox=sandbox))
    text = tool.builtin.description
    assert "time out after 30.0 seconds" in text and "stateful Jupyter notebook" in text
    if sandbox.kind == "bwrap":
        assert "'/mnt/data'" in text and "Internet access for this session is disabled" in text
        assert "no network" in tool.note
    else:
        assert f"'{tmp_path / 's'}'" in text
    if not sandbox.network_blocked:
        assert "disabled" not in text and "NOT sandboxed" in tool.note
        out = tool.call({"code": "print(1)"})
        assert "NOT sandboxed" in out.note and "NOT" not in out.content
        tool.close()


def test_the_sandbox_can_be_chosen(monkeypatch: pytest.MonkeyPatch) -> None:
    from gptoss_local.tools.errors import ToolsError

    monkeypatch.setenv("GPTOSS_LOCAL_SANDBOX", "none")
    assert detect() == NO_SANDBOX
    monkeypatch.setenv("GPTOSS_LOCAL_SANDBOX", "docker")
    with pytest.raises(ToolsError, match="bwrap, unshare or none"):
        detect()
