"""`gptoss-local run` as a user runs it: a subprocess with the tiny model on the CPU."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from engine_helpers import DATE

from gptoss_local.backends.base import Stats
from gptoss_local.commands.run import _JsonWriter
from gptoss_local.conversation import Message, Tool
from gptoss_local.events import ToolCall
from gptoss_local.harmony import render_prompt


def gptoss(home: Path, *argv: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "GPTOSS_LOCAL_HOME": str(home)}
    command = [sys.executable, "-m", "gptoss_local", *argv]
    return subprocess.run(
        command, input=stdin, capture_output=True, text=True, env=env, timeout=120
    )


def json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


def test_print_prompt_is_the_exact_harmony_text(isolated_home: Path) -> None:
    done = gptoss(
        isolated_home, "run", "--print-prompt", "--effort", "high", "--date", "2026-12-02",
        "--instructions", "Answer in French.", "What is 2+2?",
    )  # fmt: skip
    expected = render_prompt(
        [Message("user", "What is 2+2?")], effort="high", instructions="Answer in French.",
        current_date=DATE,
    )  # fmt: skip
    assert done.returncode == 0 and done.stdout == expected + "\n"
    assert "Reasoning: high" in done.stdout and "# Instructions\n\nAnswer in French." in done.stdout


def test_json_lines_end_with_the_stats(isolated_home: Path, tiny_gguf: Path) -> None:
    done = gptoss(isolated_home, "run", "--model-path", str(tiny_gguf), "--json",
                  "--max-tokens", "40", "--seed", "1", "Say hi")  # fmt: skip
    assert done.returncode == 0, done.stderr
    records = json_lines(done.stdout)
    assert records[-1]["type"] == "done"
    stats = records[-1]["stats"]
    assert stats["generated_tokens"] <= 40 and stats["prompt_tokens"] > 0
    assert {r["type"] for r in records} <= {"reasoning", "answer", "preamble", "tool_call", "done"}


def test_prompt_from_stdin_and_reasoning_on_stderr(isolated_home: Path, tiny_gguf: Path) -> None:
    done = gptoss(isolated_home, "run", "--model-path", str(tiny_gguf), "--max-tokens", "60",
                  "--seed", "2", "--show-reasoning", stdin="Hello from a pipe")  # fmt: skip
    assert done.returncode == 0, done.stderr
    # The random model writes no Harmony header, so its text is reasoning, never answer.
    assert done.stdout.strip() == ""
    assert "tok" in done.stderr


def test_native_logs_go_to_the_log_file_not_the_terminal(
    isolated_home: Path, tiny_gguf: Path
) -> None:
    done = gptoss(isolated_home, "run", "--model-path", str(tiny_gguf), "--max-tokens", "5", "x")
    assert done.returncode == 0
    for noise in ("llama_model_loader", "load_tensors", "llama_context", "ggml"):
        assert noise not in done.stderr and noise not in done.stdout
    log = (isolated_home / "logs" / "llama.log").read_text()
    assert "llama_model_loader" in log


def test_a_model_that_is_not_downloaded_is_a_clear_error(isolated_home: Path) -> None:
    done = gptoss(isolated_home, "run", "--model", "20b", "hello")
    assert done.returncode == 2
    assert "gpt-oss-20b is not downloaded" in done.stderr and "--model-path" in done.stderr


def test_bad_inputs_exit_2(isolated_home: Path, tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"name": "python", "description": "run code"}]))
    done = gptoss(isolated_home, "run", "--tools", str(tools), "--print-prompt", "hi")
    assert done.returncode == 2 and "collides with gpt-oss's built-in" in done.stderr
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"<html>404</html>")
    done = gptoss(isolated_home, "run", "--model-path", str(broken), "hi")
    assert done.returncode == 2 and "not a GGUF file" in done.stderr


def _interrupt_run(home: Path, model: Path, seed: int) -> tuple[int, str, str]:
    """`run --json` on `model`, sent SIGINT once its first streamed line is out."""
    env = {**os.environ, "GPTOSS_LOCAL_HOME": str(home)}
    command = [sys.executable, "-m", "gptoss_local", "run", "--model-path", str(model), "--json",
               "--context", "8192", "--seed", str(seed), "tell me everything"]  # fmt: skip
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True
    ) as proc:
        assert proc.stdout is not None
        first = proc.stdout.readline()  # the reply is streaming
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    return proc.returncode, first + out, err


def test_ctrl_c_stops_cleanly_with_exit_130(isolated_home: Path, small_gguf: Path) -> None:
    # The random model sometimes ends its reply on its own within a few tokens; such a run
    # says nothing about Ctrl-C, so the next seed is tried.
    for seed in (5, 2, 6):
        code, out, err = _interrupt_run(isolated_home, small_gguf, seed)
        done = json_lines(out)[-1]
        if code == 0 and done["stats"]["stop_reason"] != "cancelled":
            continue
        assert code == 130, err
        assert done["type"] == "done" and done["stats"]["stop_reason"] == "cancelled"
        assert "Traceback" not in err
        return
    raise AssertionError("every reply ended before Ctrl-C reached it")


def test_json_writer_shapes() -> None:
    out = io.StringIO()
    writer = _JsonWriter(out)
    writer.event(ToolCall("get_weather", {"city": "Oslo"}, '{"city": "Oslo"}'))
    writer.event(ToolCall("get_weather", {}, '{"city": ', error="unterminated JSON"))
    writer.done(Stats(generated_tokens=3))
    first, second, last = json_lines(out.getvalue())
    assert first == {"type": "tool_call", "name": "get_weather", "arguments": {"city": "Oslo"}}
    assert second["error"] == "unterminated JSON" and second["raw"] == '{"city": '
    assert last["type"] == "done" and last["stats"]["generated_tokens"] == 3
    assert Tool("get_weather").name == "get_weather"


def test_a_context_beyond_the_file_is_cut_and_said_so(isolated_home: Path, tiny_gguf: Path) -> None:
    done = gptoss(isolated_home, "run", "--model-path", str(tiny_gguf), "--context", "100000",
                  "--max-tokens", "3", "--seed", "1", "hi")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "tiny holds at most 4,096 tokens of context; using that instead of the 100,000" in (
        done.stderr
    )
    assert "8,192" not in done.stderr  # no advice to use more than the file holds
