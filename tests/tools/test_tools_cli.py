"""`gptoss-local tools`, `tools call` and `run --allow-tool` as a user runs them: the installed
console script, with this test's gptoss-local home."""

from __future__ import annotations

import io
import json
from argparse import Namespace
from pathlib import Path

import pytest
from engine_helpers import DATE, SEEDED, open_tiny
from installed_cli import assert_refused, gptoss
from tool_helpers import GIT_SERVER, git_server, make_repo, steered_turns, write_config

from gptoss_local.backends.base import ReplyRequest
from gptoss_local.commands import run as run_command
from gptoss_local.config import Settings
from gptoss_local.conversation import Conversation, Message
from gptoss_local.tools import Approvals, ToolLoop, open_tools

needs_git_server = pytest.mark.skipif(not GIT_SERVER.exists(), reason="mcp-server-git missing")


def test_tools_lists_python_and_says_what_its_sandbox_enforces() -> None:
    done = gptoss("tools")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("python  Use this tool to execute Python code")
    assert "built-in; asks first in chat" in done.stdout
    assert "time limit 30 s; memory limit 4,096 MiB" in done.stdout
    assert ("no network" in done.stdout) or ("NOT sandboxed" in done.stdout)
    assert "mcp.json (none yet)" in done.stdout


def test_tools_json(isolated_home: Path) -> None:
    settings = isolated_home / "config" / "settings.toml"
    settings.parent.mkdir(parents=True)
    settings.write_text('allowed_tools = ["python"]\npython_timeout = 12\n')
    done = gptoss("tools", "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    (python,) = doc["tools"]
    assert python["name"] == "python" and python["kind"] == "builtin" and python["allowed"]
    assert "time out after 12.0 seconds" in python["description"]
    assert doc["allowed_tools"] == ["python"] and doc["problems"] == []
    assert doc["mcp_config"] == str(isolated_home / "config" / "mcp.json")


def test_tools_call_python() -> None:
    done = gptoss("tools", "call", "python", '{"code": "x = 6*7\\nprint(x)\\nx + 1"}')
    assert (done.returncode, done.stdout) == (0, "42\n43\n"), done.stderr
    failed = gptoss("tools", "call", "python", '{"code": "1/0"}', "--json")
    assert failed.returncode == 1
    record = json.loads(failed.stdout)
    assert record["error"] is True and "ZeroDivisionError" in record["content"]


def test_tools_call_refuses_unknown_tools_and_bad_json() -> None:
    assert_refused(gptoss("tools", "call", "nope", "{}"), "no tool named 'nope'", "python")
    assert_refused(gptoss("tools", "call", "python", "{code: 1}"), "not valid JSON", "print(1)")
    assert_refused(gptoss("tools", "call", "python", "[1]"), "must be a JSON object")


@needs_git_server
def test_tools_with_an_mcp_server(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    write_config({"git": git_server(repo), "broken": {"command": "no-such-server-x"}})
    done = gptoss("tools")
    assert done.returncode == 1  # one server did not start: said, and the rest listed
    assert "git__git_status" in done.stdout and "MCP server git; asks first in chat" in done.stdout
    assert "error: MCP server 'broken'" in done.stderr and "not found" in done.stderr
    called = gptoss("tools", "call", "git__git_log", json.dumps({"repo_path": str(repo)}))
    assert called.returncode == 0 and "Second commit" in called.stdout


def test_a_bad_mcp_json_is_named() -> None:
    path = write_config({})
    path.write_text("{oops")
    done = gptoss("tools")
    assert done.returncode == 1 and "python" in done.stdout
    assert f"error: {path} is not valid JSON" in done.stderr and "Traceback" not in done.stderr
    assert_refused(gptoss("run", "--allow-tool", "git__git_status", "--print-prompt", "hi"),
                   str(path))  # fmt: skip


def test_run_print_prompt_with_the_python_tool() -> None:
    done = gptoss("run", "--allow-tool", "python", "--print-prompt", "--date", "2026-12-02", "hi")
    assert done.returncode == 0, done.stderr
    assert "# Tools\n\n## python\n\nUse this tool to execute Python code" in done.stdout
    assert "# Valid channels" in done.stdout and "namespace functions" not in done.stdout
    plain = gptoss("run", "--print-prompt", "hi")
    assert "## python" not in plain.stdout  # not allowed: not offered


def test_run_refuses_a_tool_that_does_not_exist() -> None:
    assert_refused(gptoss("run", "--allow-tool", "nope", "--print-prompt", "hi"),
                   "--allow-tool nope: no such tool", "gptoss-local tools")  # fmt: skip


def _run_steered(tiny_gguf: Path, json_lines: bool) -> int:
    """run's loop and writer on the steered tiny model (the CLI cannot steer it), python allowed."""
    registry = open_tools(Settings(), label="run", mcp=False)
    args = Namespace(json=json_lines, show_reasoning=False)
    conversation = registry.offer(Conversation((Message("user", "6*7?"),), current_date=DATE))
    try:
        with open_tiny(tiny_gguf) as backend:
            loop = ToolLoop(steered_turns(backend), registry, Approvals(["python"]))
            return run_command._stream(loop, ReplyRequest(conversation, SEEDED), args)
    finally:
        registry.close()


def test_run_streams_calls_and_results_as_json(
    tiny_gguf: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run_steered(tiny_gguf, json_lines=True) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    kinds = [r["type"] for r in records]
    assert kinds.index("tool_call") < kinds.index("tool_result") < kinds.index("answer")
    call = records[kinds.index("tool_call")]
    assert call == {"type": "tool_call", "name": "python", "arguments": {"code": "print(6*7)"}}
    result = records[kinds.index("tool_result")]
    assert result == {"type": "tool_result", "name": "python", "content": "42\n", "error": False}
    assert records[-1]["type"] == "done" and records[-1]["stats"]["stop_reason"] == "return"


def test_run_text_mode_shows_calls_on_stderr(
    tiny_gguf: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _run_steered(tiny_gguf, json_lines=False)
    out, err = capsys.readouterr()
    assert out == "The answer is 42\n"
    assert '[tool call] python {"code": "print(6*7)"}' in err and "[tool result] python: 42" in err


def test_json_writer_writes_results() -> None:
    from gptoss_local.events import ToolCall
    from gptoss_local.tools import ToolCallFinished, ToolOutput

    out = io.StringIO()
    writer = run_command._JsonWriter(out)
    call = ToolCall("git__git_log", {}, "{}")
    writer.event(ToolCallFinished(call, ToolOutput("x" * 5, error=True, truncated=True, note="n")))
    assert json.loads(out.getvalue()) == {"type": "tool_result", "name": "git__git_log",
        "content": "xxxxx", "error": True, "truncated": True, "note": "n"}  # fmt: skip
