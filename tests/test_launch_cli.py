"""`gptoss-local launch AGENT` as a person types it: where its own options end, an agent that is
not installed, `--config` and `--restore`, and what the agent program is started with (a script
standing in for the agent records its arguments and environment; the real agents run in
tests/serve/test_launch_agents_cli.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from serve_helpers import Running, running_server

from gptoss_local.cli import _parse


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A home of the test's own, and a PATH with no agent on it."""
    env = {**os.environ, "HOME": str(tmp_path), "GPTOSS_LOCAL_HOME": str(tmp_path / "gl"),
           "PATH": str(tmp_path / "bin"), "LANG": "C"}  # fmt: skip
    for name in ("CODEX_HOME", "CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME", "GPTOSS_LOCAL_API_KEY",
                 "LANGUAGE", "LC_ALL", "LC_MESSAGES", "GPTOSS_LOCAL_LANG"):  # fmt: skip
        env.pop(name, None)
    return env


@pytest.fixture(scope="module")
def served(tiny_gguf: Path) -> Iterator[Running]:
    with running_server(tiny_gguf) as running:
        yield running


def _launch(
    env: dict[str, str], *argv: str, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "gptoss_local", *argv], env=env, text=True,
                          capture_output=True, stdin=subprocess.DEVNULL, timeout=120,
                          cwd=cwd)  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    return done


@pytest.mark.parametrize(
    ("argv", "ours", "passed_on"),
    [
        (["opencode", "--port", "9", "run", "--port", "1", "hi"], {"port": 9},
         ["run", "--port", "1", "hi"]),
        (["claude", "--effort=high", "--claude-path", "/x", "-p", "hi"],
         {"effort": "high", "agent_path": Path("/x")}, ["-p", "hi"]),
        (["codex", "--agent-path", "/y", "--", "--config"], {"agent_path": Path("/y")},
         ["--config"]),
        (["claude", "--config"], {"config": True, "restore": False}, []),
    ],
)  # fmt: skip
def test_everything_after_its_own_options_goes_to_the_agent(argv, ours, passed_on) -> None:
    args = _parse(["launch", *argv])
    assert args.agent == argv[0] and args.agent_args == passed_on
    assert {key: getattr(args, key) for key in ours} == ours


@pytest.mark.parametrize(
    ("agent", "install"),
    [("codex", "npm i -g @openai/codex"), ("claude", "npm i -g @anthropic-ai/claude-code"),
     ("opencode", "npm i -g opencode-ai")],
)  # fmt: skip
def test_an_agent_not_installed_is_named_with_how_to_get_it(
    agent: str, install: str, env: dict[str, str]
) -> None:
    done = _launch(env, "launch", agent, "hello")
    assert done.returncode == 2 and install in done.stderr and f"--{agent}-path" in done.stderr
    given = _launch(env, "launch", agent, "--agent-path", str(Path(env["HOME"]) / "nothing"))
    assert given.returncode == 2 and install in given.stderr


def test_an_unknown_agent_is_refused_with_the_choices(env: dict[str, str]) -> None:
    done = _launch(env, "launch", "aider")
    assert done.returncode == 2 and "codex" in done.stderr and "opencode" in done.stderr


def test_restore_with_nothing_to_restore_says_so(env: dict[str, str]) -> None:
    done = _launch(env, "launch", "claude", "--restore")
    assert done.returncode == 0 and "nothing to restore" in done.stdout


def test_config_writes_for_the_running_server_and_starts_nothing(
    served: Running, env: dict[str, str]
) -> None:
    done = _launch(env, "launch", "opencode", "--config", "--port", str(served.port))
    assert done.returncode == 0, done.stderr
    path = Path(env["HOME"]) / ".config" / "opencode" / "opencode.json"
    assert str(path) in done.stdout and "`opencode`" in done.stdout and "--restore" in done.stdout
    config = json.loads(path.read_text())
    assert config["model"] == "gptoss-local/gpt-oss-tiny"
    assert config["provider"]["gptoss-local"]["options"]["baseURL"] == served.url
    assert not served.seen.conversations  # nothing was asked of the model

    restored = _launch(env, "launch", "opencode", "--restore")
    assert restored.returncode == 0 and str(path) in restored.stdout and not path.exists()


def test_config_without_a_server_names_the_planned_model(
    tiny_gguf: Path, env: dict[str, str]
) -> None:
    port = "9"  # nothing listens there
    done = _launch(env, "launch", "claude", "--config", "--port", port, "--model-path",
                   str(tiny_gguf))  # fmt: skip
    assert done.returncode == 0, done.stderr
    settings = json.loads((Path(env["HOME"]) / ".claude" / "settings.json").read_text())
    assert settings["env"]["ANTHROPIC_BASE_URL"] == f"http://127.0.0.1:{port}"
    assert settings["env"]["ANTHROPIC_MODEL"] == "tiny"
    assert f"gptoss-local serve --port {port}" in done.stdout


# The agent's stand-in: its arguments and the environment it was given (as received: a shell
# would correct a stale $PWD itself), then an exit status of its own.
RECORDER = f"""#!{sys.executable}
import json, os, sys
home = os.environ["HOME"]
with open(os.path.join(home, "argv"), "w") as out:
    json.dump(sys.argv[1:], out)
names = ("ANTHROPIC_BASE_URL", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "ANTHROPIC_API_KEY",
         "PWD")
with open(os.path.join(home, "env"), "w") as out:
    json.dump([os.environ.get(name, "unset") for name in names], out)
sys.exit(3)
"""


def test_the_agent_runs_with_its_config_and_its_exit_status_is_launchs(
    served: Running, env: dict[str, str]
) -> None:
    program = Path(env["HOME"]) / "claude-stand-in"
    program.write_text(RECORDER)
    program.chmod(0o755)
    env["ANTHROPIC_API_KEY"] = "sk-ant-not-for-this-server"
    env["PWD"] = env["HOME"]  # as a program that changed folders without telling would leave it
    work = Path(env["HOME"]) / "work"
    work.mkdir()
    done = _launch(env, "launch", "claude", "--claude-path", str(program), "--port",
                   str(served.port), "-p", "hello there", cwd=work)  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert f"using the gptoss-local server at {served.url}" in done.stderr
    argv = json.loads((Path(env["HOME"]) / "argv").read_text())
    assert argv[0] == "--settings" and argv[2:] == ["-p", "hello there"]
    settings = json.loads(Path(argv[1]).read_text())
    assert settings["env"]["ANTHROPIC_BASE_URL"] == f"http://127.0.0.1:{served.port}"
    assert settings["env"]["ANTHROPIC_MODEL"] == "gpt-oss-tiny"
    seen = json.loads((Path(env["HOME"]) / "env").read_text())  # the environment had them too
    assert seen == [settings["env"]["ANTHROPIC_BASE_URL"], "1", "unset", str(work)]
    assert not (Path(env["HOME"]) / ".claude").exists()  # the user's settings untouched
