"""MCP servers for real: mcp-server-git (from the package index, a dev extra) started over stdio
through the official SDK, against a git repository made here; and what a bad mcp.json, a
server that will not start and one that never answers look like."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tool_helpers import GIT_SERVER, git_server, make_repo, write_config

from gptoss_local.config import Settings
from gptoss_local.conversation import Conversation
from gptoss_local.tools import McpConfigError, ToolRegistry, open_tools
from gptoss_local.tools.mcp_client import McpHub
from gptoss_local.tools.mcp_config import ServerSpec, config_path, load_servers

pytestmark = [
    pytest.mark.skipif(not GIT_SERVER.exists(), reason="mcp-server-git (dev extra) not installed"),
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


@pytest.fixture
def registry(repo: Path) -> Iterator[ToolRegistry]:
    write_config({"git": git_server(repo)})
    found = open_tools(Settings(), label="test", python=False)
    yield found
    found.close()


def test_the_git_servers_tools_are_offered_as_functions(registry: ToolRegistry, repo: Path) -> None:
    names = [info.name for info in registry.infos()]
    assert {"git__git_status", "git__git_log", "git__git_diff_unstaged"} <= set(names)
    status = registry.get("git__git_status")
    assert status is not None and status.parameters is not None
    assert status.kind == "mcp" and status.source == "MCP server git"
    assert status.parameters["required"] == ["repo_path"]
    assert registry.problems == []
    offered = registry.offer(Conversation(()))
    assert "git__git_log" in [tool.name for tool in offered.tools] and not offered.builtin_tools


def test_calling_git_status_and_git_log(registry: ToolRegistry, repo: Path) -> None:
    status = registry.call("git__git_status", {"repo_path": str(repo)})
    assert not status.error and "b.txt" in status.content
    log = registry.call("git__git_log", {"repo_path": str(repo), "max_count": 5})
    assert not log.error
    assert log.content.index("Second commit") < log.content.index("First commit")


def test_a_tool_error_is_an_error_result(registry: ToolRegistry, tmp_path: Path) -> None:
    outside = registry.call("git__git_log", {"repo_path": str(tmp_path / "elsewhere")})
    assert outside.error and "outside the allowed repository" in outside.content
    missing = registry.call("git__git_status", {})
    assert missing.error


def test_a_server_that_fails_leaves_the_others_working(repo: Path) -> None:
    crash = [sys.executable, "-c", "import sys; print('cannot open the vault', file=sys.stderr); "
             "sys.exit(4)"]  # fmt: skip
    write_config({
        "git": git_server(repo),
        "gone": {"command": "no-such-mcp-server-here"},
        "crash": {"command": crash[0], "args": crash[1:]},
        "off": {"command": "also-not-there", "disabled": True},
    })  # fmt: skip
    registry = open_tools(Settings(), label="test", python=False)
    try:
        problems = "\n".join(registry.problems)
        assert "'gone'" in problems and "command 'no-such-mcp-server-here' not found" in problems
        assert "'crash'" in problems and "cannot open the vault" in problems  # stderr's tail
        assert "mcp-crash.log" in problems and "off" not in problems
        assert not registry.call("git__git_status", {"repo_path": str(repo)}).error
    finally:
        registry.close()


def test_a_server_that_never_answers_times_out(tmp_path: Path) -> None:
    silent = ServerSpec("silent", sys.executable, ("-c", "import time; time.sleep(60)"))
    hub = McpHub([silent], log_dir=tmp_path, start_seconds=1.0)
    try:
        hub.start()
        assert "did not answer within 1 s" in hub.problems["silent"]
        assert hub.call("silent", "x", {}).error
    finally:
        hub.close()


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("{not json", "is not valid JSON"),
        ('{"servers": {}}', '"mcpServers"'),
        ('{"mcpServers": {"a": "npx thing"}}', "mcpServers.a must be an object"),
        ('{"mcpServers": {"a": {"args": []}}}', 'stdio servers only, with a "command"'),
        ('{"mcpServers": {"a": {"url": "http://x"}}}', "an HTTP server (url)"),
        ('{"mcpServers": {"a": {"command": "x", "args": "-v"}}}', "args must be a list"),
        ('{"mcpServers": {"a": {"command": "x", "env": {"N": 1}}}}', "env must be an object"),
        ('{"mcpServers": {"a-b": {"command": "x"}, "a_b": {"command": "y"}}}', "same prefix"),
        ('{"mcpServers": {"a": {"command": "x", "startup_timeout_sec": 0}}}', "above 0"),
        ('{"mcpServers": {"a": {"command": "x", "startup_timeout_sec": "9"}}}', "above 0"),
    ],
)
def test_a_bad_mcp_json_is_a_clear_error_naming_the_file(text: str, words: str) -> None:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    with pytest.raises(McpConfigError) as caught:
        load_servers()
    assert str(path) in str(caught.value) and words in str(caught.value)
    registry = open_tools(Settings(), label="test")  # the chat goes on: python still there
    try:
        assert [info.name for info in registry.infos()] == ["python"]
        assert words in registry.problems[0]
    finally:
        registry.close()
    with pytest.raises(McpConfigError):
        open_tools(Settings(), label="test", strict=True)


def test_no_mcp_json_means_no_servers() -> None:
    assert load_servers() == []


def test_names_are_made_identifier_safe() -> None:
    spec = ServerSpec("my-server.v2", "x")
    assert spec.prefix == "my_server_v2"
    assert ServerSpec("2fa", "x").prefix == "_2fa"
