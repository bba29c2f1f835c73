"""What `gptoss-local launch AGENT` writes for each agent, in a home folder of the test's own:
the entries merged into the user's configuration (`--config`) with the user's other keys kept,
the original backed up once and put back by `--restore`, a broken file refused untouched, and
the files of a run kept apart from the user's configuration."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from gptoss_local.agents import claude, codex, opencode
from gptoss_local.agents.agent import Agent, Served
from gptoss_local.agents.codex_profile import HEADER, PROFILE
from gptoss_local.agents.files import AgentConfigError, backup_of
from gptoss_local.tomlread import load_toml

SERVED = Served("http://127.0.0.1:8080/v1", "gpt-oss-20b", 65_536, "high")
ELSEWHERE = Served("http://127.0.0.1:9999/v1", "gpt-oss-120b", 131_072)


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_home: Path) -> Path:
    """A home folder of the test's own; no variable points an agent elsewhere."""
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("CODEX_HOME", "CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME", "GPTOSS_LOCAL_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def _claude_file(home: Path) -> Path:
    return home / ".claude" / "settings.json"


def _opencode_file(home: Path) -> Path:
    return home / ".config" / "opencode" / "opencode.json"


# Each JSON agent: its module, its file, and a file of the user's with keys of their own.
JSON_AGENTS = [
    (claude.AGENT, _claude_file, {"theme": "dark", "env": {"MY_VAR": "1"}}),
    (opencode.AGENT, _opencode_file,
     {"theme": "tokyonight", "provider": {"mine": {"npm": "x", "models": {"m": {}}}}}),
]  # fmt: skip


def _write(path: Path, text: str, mode: int = 0o640) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)
    return path.read_bytes()


@pytest.mark.parametrize(("agent", "where", "users"), JSON_AGENTS)
def test_config_merges_keeps_the_original_once_and_restore_puts_it_back(
    agent: Agent, where, users: dict, home: Path
) -> None:
    path = where(home)
    original = _write(path, json.dumps(users, indent=4))
    assert agent.configure(SERVED).path == path
    merged = json.loads(path.read_text())
    assert merged["theme"] == users["theme"]  # the user's own keys stay
    assert backup_of(path).read_bytes() == original
    assert stat.S_IMODE(backup_of(path).stat().st_mode) == 0o640
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    agent.configure(ELSEWHERE)  # again, for another server: the backup keeps the original
    assert backup_of(path).read_bytes() == original
    assert "gpt-oss-120b" in path.read_text() and "gpt-oss-20b" not in path.read_text()
    told = agent.restore()
    assert told is not None and str(path) in told
    assert path.read_bytes() == original and not backup_of(path).exists()
    assert agent.restore() is None  # nothing left to restore


@pytest.mark.parametrize(("agent", "where", "users"), JSON_AGENTS)
def test_a_file_gptoss_local_made_is_removed_by_restore(
    agent: Agent, where, users: dict, home: Path
) -> None:
    path = where(home)
    agent.configure(SERVED)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # it may hold the server's key
    assert agent.restore() is not None
    assert not path.exists() and not backup_of(path).exists()


@pytest.mark.parametrize(("agent", "where", "users"), JSON_AGENTS)
@pytest.mark.parametrize("broken", ['{"theme": "dark",}', "[1, 2]", '{"a": 1} // mine'])
def test_a_broken_file_is_refused_and_left_as_it_is(
    agent: Agent, where, users: dict, broken: str, home: Path
) -> None:
    path = where(home)
    before = _write(path, broken)
    with pytest.raises(AgentConfigError, match="is not a JSON object gptoss-local can add to"):
        agent.configure(SERVED)
    assert path.read_bytes() == before and not backup_of(path).exists()
    assert not list(path.parent.glob("*.part"))


@pytest.mark.parametrize(("agent", "where", "key"), [
    (claude.AGENT, _claude_file, "env"), (opencode.AGENT, _opencode_file, "provider")])  # fmt: skip
def test_a_section_that_is_not_an_object_is_refused(agent: Agent, where, key: str, home) -> None:
    path = where(home)
    before = _write(path, json.dumps({key: "oops"}))
    with pytest.raises(AgentConfigError, match=repr(key)):
        agent.configure(SERVED)
    assert path.read_bytes() == before


def test_claude_codes_settings_point_every_model_role_at_the_server(home: Path) -> None:
    path = _claude_file(home)
    _write(path, json.dumps({"env": {"MY_VAR": "1", "ANTHROPIC_MODEL": "claude-x"}}))
    claude.AGENT.configure(SERVED)
    env = json.loads(path.read_text())["env"]
    assert env["MY_VAR"] == "1"
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:8080"  # the client adds /v1/messages
    for role in ("ANTHROPIC_MODEL", "ANTHROPIC_SMALL_FAST_MODEL", "ANTHROPIC_DEFAULT_HAIKU_MODEL",
                 "ANTHROPIC_DEFAULT_SONNET_MODEL", "ANTHROPIC_DEFAULT_OPUS_MODEL"):  # fmt: skip
        assert env[role] == "gpt-oss-20b"
    assert env["ANTHROPIC_AUTH_TOKEN"] == claude.PLACEHOLDER_KEY
    assert env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"
    # Claude Code's compaction window is 100,000 tokens at least: it compacts at 80% of 65,536
    assert env["CLAUDE_CODE_AUTO_COMPACT_WINDOW"] == "100000"
    assert env["CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"] == "52"
    assert env["CLAUDE_CODE_MAX_OUTPUT_TOKENS"] == "16384"  # a quarter of the context


def test_claude_code_gets_the_servers_key(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    monkeypatch.setenv("GPTOSS_LOCAL_API_KEY", "s3cret")
    keyed = Served(SERVED.url, SERVED.model, SERVED.context, key_variable="GPTOSS_LOCAL_API_KEY")
    claude.AGENT.configure(keyed)
    assert json.loads(_claude_file(home).read_text())["env"]["ANTHROPIC_AUTH_TOKEN"] == "s3cret"


def test_a_claude_run_gets_its_own_settings_and_leaves_the_users(
    home: Path, isolated_home: Path
) -> None:
    users = _write(_claude_file(home), json.dumps({"env": {"ANTHROPIC_BASE_URL": "http://old"}}))
    start = claude.AGENT.prepare(SERVED)
    assert start.argv[0] == "--settings"  # outranks the user's settings' "env"
    ours = Path(start.argv[1])
    assert ours.is_relative_to(isolated_home) and stat.S_IMODE(ours.stat().st_mode) == 0o600
    assert json.loads(ours.read_text())["env"] == start.env
    assert start.env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:8080"
    assert "ANTHROPIC_API_KEY" in start.unset  # a key for Anthropic's service is not this one
    assert _claude_file(home).read_bytes() == users
    assert not backup_of(_claude_file(home)).exists()


def test_opencode_gets_a_provider_with_the_model_and_its_context(home: Path) -> None:
    path = _opencode_file(home)
    _write(path, json.dumps({"model": "mine/m", "provider": {"mine": {"npm": "x"}}}))
    opencode.AGENT.configure(SERVED)
    config = json.loads(path.read_text())
    assert config["provider"]["mine"] == {"npm": "x"}
    assert config["model"] == config["small_model"] == "gptoss-local/gpt-oss-20b"
    provider = config["provider"]["gptoss-local"]
    assert provider["npm"] == "@ai-sdk/openai-compatible"
    assert provider["options"] == {"baseURL": SERVED.url, "apiKey": opencode.PLACEHOLDER_KEY}
    model = provider["models"]["gpt-oss-20b"]
    assert model["tool_call"] is True and model["limit"]["context"] == 65_536
    assert 0 < model["limit"]["output"] < 65_536


def test_opencodes_key_is_read_from_the_environment_never_written(
    monkeypatch: pytest.MonkeyPatch, home: Path
) -> None:
    monkeypatch.setenv("GPTOSS_LOCAL_API_KEY", "s3cret")
    keyed = Served(SERVED.url, SERVED.model, SERVED.context, key_variable="GPTOSS_LOCAL_API_KEY")
    opencode.AGENT.configure(keyed)
    start = opencode.AGENT.prepare(keyed)
    for path in (_opencode_file(home), Path(start.env["OPENCODE_CONFIG"])):
        text = path.read_text()
        assert "s3cret" not in text and "{env:GPTOSS_LOCAL_API_KEY}" in text


def test_an_opencode_run_gets_its_own_file_and_stays_offline(home: Path) -> None:
    start = opencode.AGENT.prepare(SERVED)
    config = json.loads(Path(start.env["OPENCODE_CONFIG"]).read_text())
    assert config["model"] == "gptoss-local/gpt-oss-20b" and config["autoupdate"] is False
    for switch in ("OPENCODE_DISABLE_AUTOUPDATE", "OPENCODE_DISABLE_MODELS_FETCH"):
        assert start.env[switch] == "1"
    assert not _opencode_file(home).exists()


def test_codex_restore_puts_the_users_profile_back(home: Path) -> None:
    folder = home / ".codex"
    mine = _write(folder / f"{PROFILE}.config.toml", 'model = "o3"\n')
    start = codex.AGENT.prepare(SERVED)
    assert start.argv == ("--profile", PROFILE) and start.notes  # the user is told
    assert load_toml(folder / f"{PROFILE}.config.toml")["model"] == "gpt-oss-20b"
    told = codex.AGENT.restore()
    assert told is not None and "back" in told
    assert (folder / f"{PROFILE}.config.toml").read_bytes() == mine
    assert not (folder / f"{PROFILE}.models.json").exists()
    assert not list(folder.glob("*.bak-*"))


def test_codex_restore_removes_gptoss_locals_own_profile(home: Path) -> None:
    written = codex.AGENT.configure(SERVED)
    assert written.path.read_text().startswith(HEADER) and not written.notes
    assert codex.AGENT.restore() is not None
    assert not list((home / ".codex").iterdir())
    assert codex.AGENT.restore() is None
