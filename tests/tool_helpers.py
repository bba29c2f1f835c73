"""Helpers for the tools tests: a real git repository and mcp.json for mcp-server-git, and the
tiny model steered into calling the python tool and then answering from its result."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

from gptoss_local.backends.base import Reply, ReplyRequest
from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
from gptoss_local.backends.llamacpp.options import LlamaOptions
from gptoss_local.conversation import Conversation
from gptoss_local.tools.mcp_config import config_path

GIT_SERVER = Path(sys.executable).parent / "mcp-server-git"
CALLS_PYTHON = (
    'root ::= <|channel|> "analysis" <|message|> "Let me compute" <|end|> '
    '<|start|> "assistant" <|channel|> "analysis to=python code" <|message|> "print(6*7)"'
)
ANSWERS = (
    'root ::= <|channel|> "analysis" <|message|> "It printed 42" <|end|> '
    '<|start|> "assistant" <|channel|> "final" <|message|> "The answer is 42"'
)


def make_repo(folder: Path) -> Path:
    """A git repository with two commits and an untracked file."""
    folder.mkdir(parents=True)
    env = {"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.org",
           "HOME": str(folder.parent), "PATH": "/usr/bin:/bin:/usr/local/bin"}  # fmt: skip

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True, env=env)

    git("init", "-q")
    (folder / "a.txt").write_text("one\n")
    git("add", "a.txt")
    git("commit", "-q", "-m", "First commit")
    (folder / "a.txt").write_text("one\ntwo\n")
    git("commit", "-q", "-am", "Second commit")
    (folder / "b.txt").write_text("new\n")
    return folder


def write_config(servers: dict[str, object]) -> Path:
    """mcp.json in this test's config folder, with these servers."""
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def git_server(repo: Path) -> dict[str, object]:
    """mcp.json's entry for mcp-server-git on `repo`."""
    return {"command": str(GIT_SERVER), "args": ["--repository", str(repo)]}


class Steered:
    """The backend with one set of llama.cpp options per turn; keeps what each turn was given."""

    def __init__(self, backend: LlamaCppBackend, *options: LlamaOptions) -> None:
        self.backend, self.options = backend, list(options)
        self.capabilities = backend.capabilities
        self.seen: list[Conversation] = []

    def __getattr__(self, name: str) -> object:  # info, prefill, close: the engine's own
        return getattr(self.backend, name)

    def stream(self, request: ReplyRequest, cancel: threading.Event | None = None) -> Reply:
        self.seen.append(request.conversation)
        return self.backend.stream(request, cancel, self.options.pop(0))


def ban(backend: LlamaCppBackend, *tokens: str) -> tuple[tuple[int, float], ...]:
    """A logit bias that bans these tokens."""
    return tuple((backend.tokenize(t)[0], float("-inf")) for t in tokens)


def steered_turns(backend: LlamaCppBackend) -> Steered:
    """Turn 1 calls python with print(6*7); turn 2 answers "The answer is 42"."""
    # Once a grammar is complete only end-of-generation tokens remain; the bans leave one.
    call = LlamaOptions(CALLS_PYTHON, ban(backend, "<|return|>", "<|endoftext|>"))
    final = LlamaOptions(ANSWERS, ban(backend, "<|call|>", "<|endoftext|>"))
    return Steered(backend, call, final)
