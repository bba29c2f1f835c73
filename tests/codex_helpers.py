"""The real Codex CLI against `serve` on the tiny model, steered through a scripted agent turn by
turn (tests/serve/test_codex_cli.py and bench/record_codex_session.py).

Codex is pinned in tests/clients (scripts/test installs it with npm). Where it is not installed
the tests skip, except under `GPTOSS_LOCAL_REQUIRE_CLIENTS=1` (CI), where they fail.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from serve_helpers import Steering

from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
from gptoss_local.backends.llamacpp.options import LlamaOptions
from gptoss_local.conversation import Conversation

CLIENTS = Path(__file__).resolve().parent / "clients"
CONTEXT = 32_768  # Codex's instructions and tools: about 7,500 of the tiny model's tokens


@dataclass(frozen=True)
class Step:
    """One model turn: a thought, then a call to `tool` with `payload` (a JSON object for a
    function, raw text for a freeform tool), or with no tool the answer `payload`."""

    thought: str
    tool: str | None
    payload: str

    def grammar(self) -> str:
        """GBNF that makes the tiny model write this turn."""
        head = f'root ::= <|channel|> "analysis" <|message|> {_literal(self.thought)} <|end|> '
        if self.tool is None:
            return (
                head
                + f'<|start|> "assistant" <|channel|> "final" <|message|> {_literal(self.payload)}'
            )
        return head + (f'<|start|> "assistant" <|channel|> "commentary to=functions.{self.tool}" '
                       f"<|message|> {_literal(self.payload)}")  # fmt: skip


def shell(thought: str, command: str) -> Step:
    """A turn that runs `command` with Codex's shell tool."""
    return Step(thought, "exec_command", json.dumps({"cmd": command}))


def answer(thought: str, text: str) -> Step:
    return Step(thought, None, text)


def _literal(text: str) -> str:
    return json.dumps(text)  # GBNF string literals escape as JSON does


class ScriptedAgent(Steering):
    """Each request Codex makes gets the next step of the script (then plain answers); one
    without tools (Codex asking for a summary to compact the session) gets `toolless`."""

    script: Sequence[Step] = ()
    toolless: Step | None = None

    def __init__(self, backend: LlamaCppBackend) -> None:
        super().__init__(backend)
        ends = ("<|return|>", "<|call|>", "<|endoftext|>")
        self._ban = {t: (backend.tokenize(t)[0], float("-inf")) for t in ends}
        self.turn = 0

    def _options(self, conversation: Conversation) -> LlamaOptions:
        if not conversation.tools and self.toolless is not None:
            step = self.toolless
        elif self.turn >= len(self.script):
            return self._reply
        else:
            step, self.turn = self.script[self.turn], self.turn + 1
        # a call ends with <|call|>, an answer with <|return|>
        banned = ("<|return|>", "<|endoftext|>") if step.tool else ("<|call|>", "<|endoftext|>")
        return replace(self._reply, grammar=step.grammar(),
                       logit_bias=tuple(self._ban[t] for t in banned))  # fmt: skip


def scripted(*steps: Step, toolless: Step | None = None) -> type[ScriptedAgent]:
    """A `ScriptedAgent` class (what `running_server(steer=...)` takes) for `steps`."""
    return type("Script", (ScriptedAgent,), {"script": tuple(steps), "toolless": toolless})


def codex_program() -> Path:
    """The pinned Codex CLI, or skip (fail in CI) where it is not installed."""
    return node_client("codex", "Codex CLI")


def node_client(name: str, title: str) -> Path:
    """The pinned client program `name` of tests/clients, or skip (fail in CI) where it is not
    installed."""
    program = CLIENTS / "node_modules" / ".bin" / name
    if not program.exists():
        why = f"{title} is not installed in {CLIENTS} (scripts/test installs it with npm)"
        if os.environ.get("GPTOSS_LOCAL_REQUIRE_CLIENTS"):
            pytest.fail(why)
        pytest.skip(why)
    return program


def run_codex(
    work: Path, home: Path, *argv: str, timeout: float = 240, verb: str = "codex"
) -> subprocess.CompletedProcess[str]:
    """`gptoss-local codex ARGV` (`verb` "launch codex": the same through `launch`) in `work`,
    with Codex's and gptoss-local's homes in `home`."""
    env = {**os.environ, "CODEX_HOME": str(home / "codex"), "GPTOSS_LOCAL_HOME": str(home / "gl")}
    env.pop("GPTOSS_LOCAL_API_KEY", None)
    command = [sys.executable, "-m", "gptoss_local", *verb.split(), "--codex-path",
               str(codex_program()), *argv]  # fmt: skip
    return subprocess.run(command, cwd=work, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=timeout)  # fmt: skip


def exec_args(prompt: str, *more: str) -> list[str]:
    """Codex's own options: every config key checked, no sandbox (the commands are the test's)."""
    return ["--strict-config", "exec", "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox", *more, prompt]  # fmt: skip
