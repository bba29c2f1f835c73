"""MCP servers that misbehave, driven as a user meets them: the installed `gptoss-local` with an
mcp.json naming stand-in servers (tests/tools/mcp_standin.py). A server that prints junk on
stdout is named in one line, its junk in its log; one that hangs at start-up is named, stopped
with its children, and holds up neither the working server nor the exit; one that floods stderr
has a log of bounded size."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import psutil
from installed_cli import gptoss
from tool_helpers import write_config

from gptoss_local import paths

STANDIN = Path(__file__).with_name("mcp_standin.py")
HI = json.dumps({"text": "hi"})
CAP = 4 * 1024 * 1024  # "a few MB" per log file


def standin(*args: str) -> dict[str, object]:
    """mcp.json's entry for the stand-in server in one of its modes."""
    return {"command": sys.executable, "args": [str(STANDIN), *args]}


def test_junk_on_stdout_is_one_line_naming_the_server_and_the_rest_is_in_its_log() -> None:
    write_config({"noisy": standin("junk", "2000"), "quiet": standin("serve")})
    listed = gptoss("tools")
    assert "Traceback" not in listed.stderr, listed.stderr[:2000]
    assert listed.returncode == 1  # a server that breaks the protocol is a set-up problem
    assert "noisy__echo" in listed.stdout and "quiet__echo" in listed.stdout
    lines = listed.stderr.strip().splitlines()
    assert len(lines) == 1, lines[:5]
    assert "error: MCP server 'noisy'" in lines[0] and "2,000 lines" in lines[0]
    assert "mcp-noisy.log" in lines[0]
    log = (paths.logs_dir() / "mcp-noisy.log").read_text()
    assert "starting up... 1999 <not json>" in log  # what the server printed, for the user
    called = gptoss("tools", "call", "noisy__echo", HI)
    assert called.returncode == 0 and called.stdout == "echo: hi\n"
    assert "Traceback" not in called.stderr
    # The 3 lines it prints during the call are news: one note, once.
    assert called.stderr.count("\n") == 1, called.stderr[:2000]
    assert "note: MCP server 'noisy' wrote 3 lines" in called.stderr


def test_a_server_that_hangs_at_start_up_is_stopped_and_does_not_hold_up_the_others() -> None:
    pids = paths.data_dir() / "hung.pids"
    pids.parent.mkdir(parents=True, exist_ok=True)
    # Listed first: the hub once cancelled the last server's task, not the hung one's.
    hung = {**standin("hang", str(pids)), "startup_timeout_sec": 2}
    write_config({"hung": hung, "echo": standin("serve")})

    started = time.monotonic()
    called = gptoss("tools", "call", "echo__echo", HI)
    took = time.monotonic() - started
    assert called.returncode == 0 and called.stdout == "echo: hi\n", called.stderr
    # 2 s to start, then the SDK's stop: stdin closed (2 s), SIGTERM (ignored, 2 s), SIGKILL.
    assert took < 16, f"gptoss-local took {took:.1f} s"
    assert_all_gone(pids)

    pids.unlink()
    started = time.monotonic()
    done = gptoss("run", "--allow-tool", "echo__echo", "--print-prompt", "hi")
    took = time.monotonic() - started
    assert done.returncode == 0 and "echo__echo" in done.stdout, done.stderr
    assert "warning: MCP server 'hung': it did not answer within 2 s" in done.stderr
    assert "Traceback" not in done.stderr
    assert took < 16, f"gptoss-local took {took:.1f} s"
    assert_all_gone(pids)


def assert_all_gone(pid_file: Path) -> None:
    """Neither the hung server nor its child is alive (a zombie awaiting its reaper is dead)."""
    assert pid_file.exists(), "the hung server never started"
    for pid in map(int, pid_file.read_text().split()):
        deadline = time.monotonic() + 1.0  # a kill just sent may take a moment to land
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(pid), f"process {pid} of the hung server survived gptoss-local"


def _alive(pid: int) -> bool:
    try:  # checked by command line too: the pid may have been reused since
        process = psutil.Process(pid)
        if process.status() == psutil.STATUS_ZOMBIE:
            return False
        command = " ".join(process.cmdline())
    except psutil.Error:
        return False
    return str(STANDIN) in command or "time.sleep(300)" in command


def test_a_server_that_floods_stderr_keeps_a_log_of_bounded_size() -> None:
    write_config({"flood": standin("flood", "50")})
    started = time.monotonic()
    done = gptoss("tools")
    assert done.returncode == 0 and "flood__echo" in done.stdout, done.stderr
    assert time.monotonic() - started < 60
    log = paths.logs_dir() / "mcp-flood.log"
    kept = sorted(paths.logs_dir().glob("mcp-flood.log*"))
    assert kept == [log, log.with_name("mcp-flood.log.1")]  # one old file kept, no more
    assert all(path.stat().st_size <= CAP for path in kept)
    assert log.read_text().endswith("flood done\n")  # the newest output is the one kept
