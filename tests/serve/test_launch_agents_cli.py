"""Real agents (pinned in tests/clients) against `serve` through `gptoss-local launch AGENT`.

opencode runs one-shot (`opencode run`) with homes of the test's own and its network switched
off (no updates, no model list, no sharing): the tiny model, steered turn by turn
(codex_helpers), calls opencode's `bash` tool, opencode runs the command, and the file it writes
is the proof of the round trip. Claude Code does the same through `launch claude`, its
settings given by launch alone (tests/serve/test_claude_code.py covers its requests), with a
refusing proxy for anything past loopback. `launch codex` is checked to reach the same Codex run
as `gptoss-local codex` (tests/serve/test_codex_cli.py covers Codex itself).
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from codex_helpers import (
    CONTEXT,
    Step,
    answer,
    exec_args,
    node_client,
    run_codex,
    scripted,
    shell,
)
from serve_helpers import running_server

COMMAND = "echo made by opencode > proof.txt"
# opencode's instructions and tools are ~26,000 of the tiny model's tokens (one is little more
# than a letter), and it compacts a session past its context less the reply's room (a quarter):
# a 32k context would compact at once.
OPENCODE_CONTEXT = 65_536


@pytest.fixture(scope="module")
def roomier_gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model with a 64k-token context."""
    from synthetic import TINY, write_gguf

    shape = dataclasses.replace(TINY, name="tiny-roomier", context_length=OPENCODE_CONTEXT)
    return write_gguf(tmp_path_factory.mktemp("models") / "roomier.gguf", shape, seed=1)


def _homes(home: Path) -> dict[str, str]:
    """Every folder opencode reads or writes, under `home`."""
    folders = {"CONFIG": "config", "DATA": "data", "CACHE": "cache", "STATE": "state"}
    xdg = {f"XDG_{kind}_HOME": str(home / name) for kind, name in folders.items()}
    return {"HOME": str(home), "GPTOSS_LOCAL_HOME": str(home / "gl"), **xdg}


def test_opencode_runs_the_models_command_through_launch(
    roomier_gguf: Path, tmp_path: Path
) -> None:
    opencode = node_client("opencode", "opencode")
    work = tmp_path / "work"
    work.mkdir()
    bash = Step("Write the proof file", "bash",
                json.dumps({"command": COMMAND, "description": "Writes proof.txt"}))  # fmt: skip
    # opencode asks the model for the session's title first, without tools
    script = scripted(bash, answer("Done", "Wrote proof.txt"), toolless=answer("Title", "Proof"))
    env = {**os.environ, **_homes(tmp_path / "home")}  # $PWD: this test's folder, not `work`
    for name in ("GPTOSS_LOCAL_API_KEY", "OPENCODE_CONFIG", "OPENCODE_CONFIG_CONTENT"):
        env.pop(name, None)
    with running_server(roomier_gguf, context=OPENCODE_CONTEXT, steer=script) as server:
        done = subprocess.run(
            [sys.executable, "-m", "gptoss_local", "launch", "opencode", "--opencode-path",
             str(opencode), "--port", str(server.port), "run", "make the proof file"],
            cwd=work, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
            timeout=300,
        )  # fmt: skip
        asked, stats = server.seen.conversations, server.seen.stats
    assert done.returncode == 0, done.stdout + done.stderr
    assert (work / "proof.txt").read_text() == "made by opencode\n"
    assert "Wrote proof.txt" in done.stdout
    working = [c for c in asked if c.tools]
    assert len(working) == 2 and "bash" in {tool.name for tool in working[0].tools}
    called, output = working[1].messages[-2:]  # the call and the command's output came back
    assert json.loads(str(called.tool_calls[0].arguments))["command"] == COMMAND
    assert output.role == "tool"
    assert stats[-1].prompt_tokens > 20_000  # opencode's whole prompt, uncompacted
    assert not (
        tmp_path / "home" / "config" / "opencode" / "opencode.json"
    ).exists()  # not the user's


def test_claude_code_runs_the_models_command_through_launch(
    roomy_gguf: Path, tmp_path: Path
) -> None:
    claude = node_client("claude", "Claude Code")
    work = tmp_path / "work"
    work.mkdir()
    bash = Step("Make the proof file", "Bash",
                json.dumps({"command": "echo made by claude > proof.txt",
                            "description": "Writes proof.txt"}))  # fmt: skip
    script = scripted(bash, answer("Done", "All done"))
    nowhere = "http://127.0.0.1:9"  # a proxy that refuses: anything past loopback would fail
    env = {**os.environ, **_homes(tmp_path / "home"), "NO_PROXY": "127.0.0.1,localhost",
           **dict.fromkeys(("HTTPS_PROXY", "HTTP_PROXY"), nowhere)}  # fmt: skip
    for name in ("GPTOSS_LOCAL_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        env.pop(name, None)
    with running_server(roomy_gguf, context=CONTEXT, steer=script) as server:
        done = subprocess.run(
            [sys.executable, "-m", "gptoss_local", "launch", "claude", "--claude-path",
             str(claude), "--port", str(server.port), "-p", "make the proof file", "--tools",
             "Bash", "--allowedTools", "Bash", "--output-format", "json"],
            cwd=work, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
            timeout=300,
        )  # fmt: skip
        asked = server.seen.conversations
    assert done.returncode == 0, done.stdout + done.stderr
    assert (work / "proof.txt").read_text() == "made by claude\n"
    assert json.loads(done.stdout)["result"] == "All done"
    assert len(asked) == 2 and asked[1].messages[-1].role == "tool"
    assert not (tmp_path / "home" / ".claude" / "settings.json").exists()  # not the user's


def test_launch_codex_is_gptoss_local_codex(roomy_gguf: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    script = scripted(shell("Write it", "echo made by codex > proof.txt"), answer("Done", "Made"))
    with running_server(roomy_gguf, context=CONTEXT, steer=script) as server:
        done = run_codex(work, tmp_path, "--port", str(server.port), *exec_args("make proof"),
                         verb="launch codex")  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"using the gptoss-local server at {server.url}" in done.stderr
    assert (work / "proof.txt").read_text() == "made by codex\n" and "Made" in done.stdout
