"""`gptoss-local launch AGENT` runs the agent against the machine's engine (found through its
runtime file, with its key) rather than loading a second copy, whatever --port says."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from serve_helpers import serve_process

# The agent's stand-in: the arguments and the variables it was given.
RECORDER = f"""#!{sys.executable}
import json, os, sys
with open(os.path.join(os.environ["HOME"], "seen"), "w") as out:
    json.dump({{"argv": sys.argv[1:], "token": os.environ.get("ANTHROPIC_AUTH_TOKEN"),
               "url": os.environ.get("ANTHROPIC_BASE_URL")}}, out)
"""


def test_launch_runs_the_agent_on_the_engine_with_its_key(
    tiny_gguf: Path, isolated_home: Path, tmp_path: Path
) -> None:
    home = tmp_path / "user"
    home.mkdir()
    program = home / "claude-stand-in"
    program.write_text(RECORDER)
    program.chmod(0o755)
    env = {**os.environ, "HOME": str(home), "GPTOSS_LOCAL_HOME": str(isolated_home)}
    for name in ("GPTOSS_LOCAL_API_KEY", "CLAUDE_CONFIG_DIR", "ANTHROPIC_API_KEY"):
        env.pop(name, None)
    with serve_process(tiny_gguf, isolated_home, "--api-key", "k3y") as served:
        done = subprocess.run(
            [sys.executable, "-m", "gptoss_local", "launch", "claude", "--claude-path",
             str(program), "--port", "9", "-p", "hi"],
            env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120,
        )  # fmt: skip
        log = served.log()
    assert done.returncode == 0, done.stderr
    seen = json.loads((home / "seen").read_text())
    assert seen["url"] == f"http://127.0.0.1:{served.port}"  # the engine's, not port 9
    assert seen["token"] == "k3y"  # its key, from the runtime file
    assert "serving" not in done.stderr  # nothing loaded here
    assert "GET /gptoss-local/engine 200" in log


def _launch(home: Path, isolated_home: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    """`launch claude` with the recording stand-in, no terminal; after its own `flags`."""
    program = home / "claude-stand-in"
    program.write_text(RECORDER)
    program.chmod(0o755)
    env = {**os.environ, "HOME": str(home), "GPTOSS_LOCAL_HOME": str(isolated_home)}
    for name in ("GPTOSS_LOCAL_API_KEY", "CLAUDE_CONFIG_DIR", "ANTHROPIC_API_KEY"):
        env.pop(name, None)
    return subprocess.run(
        [sys.executable, "-m", "gptoss_local", "launch", "claude", "--claude-path",
         str(program), *flags, "-p", "hi"],
        env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120,
    )  # fmt: skip


def test_launch_switches_the_engine_to_the_model_asked_for_with_switch(
    tiny_gguf: Path, isolated_home: Path, tmp_path: Path
) -> None:
    home, other = tmp_path / "user", tmp_path / "other.gguf"
    home.mkdir()
    shutil.copyfile(tiny_gguf, other)
    with serve_process(tiny_gguf, isolated_home, "--api-key", "k3y") as served:
        refused = _launch(home, isolated_home, "--model-path", str(other), "--context", "2048")
        assert refused.returncode != 0 and not (home / "seen").exists()
        assert "holds tiny, not other" in refused.stderr and "--switch" in refused.stderr
        done = _launch(home, isolated_home, "--model-path", str(other), "--context", "2048",
                       "--switch")  # fmt: skip
        log = served.log()
    assert done.returncode == 0, done.stderr
    assert "switching the engine to other" in done.stderr and "serving" not in done.stderr
    seen = json.loads((home / "seen").read_text())
    assert seen["url"] == f"http://127.0.0.1:{served.port}" and seen["token"] == "k3y"
    assert "POST /gptoss-local/engine/switch 200" in log and "switched to other" in log
