"""OpenAI's Codex CLI (the real one, pinned in tests/clients and installed by scripts/test)
against `serve`, through `gptoss-local codex`.

The random tiny model is steered through a script (codex_helpers): it reasons and calls Codex's
shell tool (`exec_command`) or its freeform `apply_patch`, and answers once it has the output.
Codex runs the commands and applies the patches itself, so the files on disk are the proof of
each round trip.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from codex_helpers import CONTEXT, Step, answer, exec_args, run_codex, scripted, shell
from serve_helpers import running_server

from gptoss_local.backends.ollama.probe import free_port
from gptoss_local.tomlread import load_toml

COMMAND = "echo made by codex > proof.txt"
THOUGHT = "Write the proof file"
PATCH = """*** Begin Patch
*** Update File: hello.py
@@
-print("hi")
+def greet():
+    print("hello")
+
+greet()
*** End Patch
"""


def test_codex_runs_the_models_command_and_answers(roomy_gguf: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    script = scripted(shell(THOUGHT, COMMAND), answer("Done", "Hello there"))
    with running_server(roomy_gguf, context=CONTEXT, steer=script) as server:
        done = run_codex(work, tmp_path, "--port", str(server.port), *exec_args("make proof"))
        seen = server.seen
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"using the gptoss-local server at {server.url}" in done.stderr
    assert (work / "proof.txt").read_text() == "made by codex\n"
    assert "Hello there" in done.stdout
    assert len(seen.conversations) == 2
    first, second = seen.conversations
    assert not any(tool.name == "web_search" for tool in first.tools)
    assert {"exec_command", "apply_patch"} <= {tool.name for tool in first.tools}
    # The second request carried the first turn back: its reasoning (from the reasoning item
    # Codex returned), the call, and the command's output.
    asked, output = second.messages[-2:]
    assert asked.role == "assistant" and asked.reasoning == THOUGHT
    assert json.loads(str(asked.tool_calls[0].arguments)) == {"cmd": COMMAND}
    assert output.role == "tool" and output.tool_name == "exec_command"
    assert "exited with code 0" in output.content
    # ...and reused the first request's cache: every token of the first prompt.
    assert seen.stats[1].cached_tokens >= seen.stats[0].prompt_tokens > 5_000


def test_codex_applies_the_models_patch_and_resumes(roomy_gguf: Path, tmp_path: Path) -> None:
    """apply_patch is a freeform tool: the patch goes to Codex as raw text and Codex applies it;
    a second `codex exec resume` turn carries the whole first turn back."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "hello.py").write_text('print("hi")\n')
    script = scripted(
        Step("Change the greeting", "apply_patch", PATCH),
        answer("Patched", "Added greet()"),
        shell("Run it", "python3 hello.py > ran.txt"),
        answer("It ran", "It prints hello"),
    )
    with running_server(roomy_gguf, context=CONTEXT, steer=script) as server:
        port = str(server.port)
        first = run_codex(work, tmp_path, "--port", port, *exec_args("add greet"))
        resumed = run_codex(work, tmp_path, "--port", port,
                            *exec_args("run it", "resume", "--last"))  # fmt: skip
        seen = server.seen
    assert first.returncode == 0 and resumed.returncode == 0, first.stderr + resumed.stderr
    assert (work / "hello.py").read_text() == 'def greet():\n    print("hello")\n\ngreet()\n'
    assert (work / "ran.txt").read_text() == "hello\n"
    assert "It prints hello" in resumed.stdout
    patch_call = seen.conversations[1].messages[-2].tool_calls[0]
    assert (patch_call.name, patch_call.arguments) == ("apply_patch", PATCH)
    # The resumed turn carries the first back. Its prompt drops the finished turn's reasoning
    # and calls (as Harmony's history rules say), so the cache is kept up to where they were.
    third = seen.conversations[2]
    assert [m.content for m in third.messages if m.role == "assistant"][-1] == "Added greet()"
    assert seen.stats[2].cached_tokens >= seen.stats[0].prompt_tokens
    assert seen.stats[2].evaluated_tokens < seen.stats[1].evaluated_tokens


def test_codex_command_serves_the_model_itself(roomy_gguf: Path, tmp_path: Path) -> None:
    """No server running: `gptoss-local codex` loads the model, serves it while Codex runs (the
    random model's answer is noise, but a whole turn), stops, and leaves Codex a profile."""
    work = tmp_path / "work"
    work.mkdir()
    port = free_port()
    done = run_codex(work, tmp_path, "--model-path", str(roomy_gguf), "--port", str(port),
                     *exec_args("say hi"))  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"serving roomy with a 32,768-token context at http://127.0.0.1:{port}/v1" in done.stderr
    profile = load_toml(tmp_path / "codex" / "gptoss-local.config.toml")
    assert profile["model"] == "roomy" and profile["model_context_window"] == CONTEXT
    assert profile["model_providers"]["gptoss-local"]["base_url"] == f"http://127.0.0.1:{port}/v1"
    catalog = json.loads(Path(profile["model_catalog_json"]).read_text())
    assert catalog["models"][0]["slug"] == "roomy"
    log = (tmp_path / "gl" / "logs" / "codex-serve.log").read_text()
    assert "POST /v1/responses 200 " in log
    with pytest.raises(OSError):  # the server stopped with Codex
        socket.create_connection(("127.0.0.1", port), timeout=2)


def test_without_codex_it_says_how_to_get_it(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": str(tmp_path), "GPTOSS_LOCAL_HOME": str(tmp_path / "gl")}
    done = subprocess.run([sys.executable, "-m", "gptoss_local", "codex", "exec", "hi"],
                          env=env, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "npm i -g @openai/codex" in done.stderr


def test_codex_compacts_a_long_session_through_serve(roomy_gguf: Path, tmp_path: Path) -> None:
    """Near its token limit Codex asks the model itself for a summary (a request without tools)
    and goes on from the summary alone."""
    work = tmp_path / "work"
    work.mkdir()
    summary = "Summary: echo 1 and echo 2 ran fine"
    script = scripted(shell("one", "echo 1"), shell("two", "echo 2"), answer("done", "All done"),
                      toolless=answer("sum up", summary))  # fmt: skip
    limit = "model_auto_compact_token_limit=7400"  # just past the first prompt
    with running_server(roomy_gguf, context=CONTEXT, steer=script) as server:
        done = run_codex(work, tmp_path, "--port", str(server.port), "-c", limit,
                         *exec_args("count"))  # fmt: skip
        asked = server.seen.conversations
    assert done.returncode == 0, done.stdout + done.stderr
    assert "context compacted" in done.stderr and "All done" in done.stdout
    compacting = [n for n, c in enumerate(asked) if not c.tools]  # summaries asked for
    assert compacting and compacting[-1] < len(asked) - 1
    for n in compacting:  # the next request starts again from the summary
        after = asked[n + 1]
        assert any(summary in m.content for m in after.messages if m.role == "user")
        assert not any(m.role in ("assistant", "tool") for m in after.messages)
