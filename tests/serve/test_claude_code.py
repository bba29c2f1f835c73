"""Claude Code (the real one, pinned in tests/clients and installed by scripts/test) against
`serve`'s Messages API, offline, with a throwaway HOME so no user configuration is read or
written.

Claude Code takes its server from ANTHROPIC_BASE_URL (without /v1: it adds /v1/messages) and
its key from ANTHROPIC_API_KEY (sent as x-api-key). It sends `thinking: {type: adaptive,
display: omitted}`, `output_config.effort`, `context_management` and a system message among
the messages; the thinking comes back with its text left out, and the signature carries it.
Its whole tool set is about 36,000 of the tiny model's tokens, past its 32,768-token context,
so the test offers it Bash alone (`--tools Bash`). The random model is steered (codex_helpers)
to call Bash, then to answer once it has the output: the file on disk is the proof. Every
connection past loopback goes to a proxy that refuses it, so the run is offline.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from codex_helpers import CLIENTS, CONTEXT, Step, answer, scripted
from serve_helpers import running_server

CLAUDE = CLIENTS / "node_modules" / ".bin" / "claude"
COMMAND = "echo made by claude > proof.txt"
THOUGHT = "Make the proof file"
NOWHERE = "http://127.0.0.1:9"  # a proxy that refuses: anything past loopback would fail


def claude_program() -> Path:
    """The pinned Claude Code, or skip (fail in CI) where it is not installed."""
    if not CLAUDE.exists():
        why = f"Claude Code is not installed in {CLIENTS} (scripts/test installs it with npm)"
        if os.environ.get("GPTOSS_LOCAL_REQUIRE_CLIENTS"):
            pytest.fail(why)
        pytest.skip(why)
    return CLAUDE


def run_claude(
    work: Path, home: Path, base_url: str, prompt: str, *flags: str
) -> subprocess.CompletedProcess[str]:
    """`claude -p PROMPT` in `work`, against `base_url`, with nothing of the user's (and
    `flags`)."""
    models = ("ANTHROPIC_MODEL", "ANTHROPIC_SMALL_FAST_MODEL", "ANTHROPIC_DEFAULT_HAIKU_MODEL")
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "ANTHROPIC_BASE_URL": base_url,
           "ANTHROPIC_API_KEY": "local", **dict.fromkeys(models, "gpt-oss-tiny"),
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1",
           **dict.fromkeys(("HTTPS_PROXY", "HTTP_PROXY"), NOWHERE),
           "NO_PROXY": "127.0.0.1,localhost"}  # fmt: skip
    command = [str(claude_program()), "-p", prompt, "--model", "gpt-oss-tiny", "--tools", "Bash",
               "--allowedTools", "Bash", "--output-format", "json", *flags]  # fmt: skip
    return subprocess.run(command, cwd=work, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=300)  # fmt: skip


def test_claude_code_runs_the_models_command_and_answers(roomy_gguf: Path, tmp_path: Path) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    bash = json.dumps({"command": COMMAND, "description": "Write the proof file"})
    script = scripted(Step(THOUGHT, "Bash", bash), answer("Done", "All done"))
    with running_server(roomy_gguf, context=CONTEXT, steer=script) as server:
        done = run_claude(work, home, server.url.removesuffix("/v1"), "make the proof file")
        seen = server.seen
    assert done.returncode == 0, done.stdout + done.stderr
    assert (work / "proof.txt").read_text() == "made by claude\n"
    result = json.loads(done.stdout)
    assert result["result"] == "All done" and not result["is_error"]
    first, second = seen.conversations
    assert "Bash" in [tool.name for tool in first.tools]
    assert first.instructions and "# Environment" in first.instructions
    # The second request carried the first turn back: the reasoning (from the signature of
    # a thinking block whose text Claude Code asked to be left out), the call, its output.
    asked, output = second.messages[-2:]
    assert asked.role == "assistant" and asked.reasoning == THOUGHT
    assert json.loads(str(asked.tool_calls[0].arguments))["command"] == COMMAND
    assert output.role == "tool" and output.tool_name == "Bash"
    assert seen.settings[0].effort == "high"  # Claude Code's output_config.effort
    assert seen.stats[1].cached_tokens >= seen.stats[0].prompt_tokens > 5_000


STANDIN = Path(__file__).resolve().parents[1] / "tools" / "mcp_standin.py"  # one tool: echo


def test_claude_code_calls_the_tool_of_an_mcp_server_whose_name_has_a_hyphen(
    roomy_gguf: Path, tmp_path: Path
) -> None:
    """Claude Code names the tools of MCP server `my-server` ``mcp__my-server__echo``: the
    model sees ``mcp__my_server__echo`` and calls it so, Claude Code gets its own name back
    (or it would not run the tool), and its result goes back to the model."""
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    servers = {"mcpServers": {"my-server": {"command": sys.executable,
                                            "args": [str(STANDIN), "serve"]}}}  # fmt: skip
    step = Step(THOUGHT, "mcp__my_server__echo", json.dumps({"text": "from the model"}))
    script = scripted(step, answer("Done", "All done"))
    with running_server(roomy_gguf, context=CONTEXT, steer=script) as server:
        done = run_claude(work, home, server.url.removesuffix("/v1"), "echo something",
                          "--mcp-config", json.dumps(servers), "--strict-mcp-config",
                          "--allowedTools", "mcp__my-server__echo")  # fmt: skip
        seen = server.seen
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["result"] == "All done"
    first, second = seen.conversations
    assert "mcp__my_server__echo" in [tool.name for tool in first.tools]
    asked, output = second.messages[-2:]
    assert [call.name for call in asked.tool_calls] == ["mcp__my_server__echo"]
    assert (output.tool_name, output.content) == ("mcp__my_server__echo", "echo: from the model")
