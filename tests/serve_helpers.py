"""The real server (`gptoss_local.serve`) on the tiny model, on loopback, for the tests.

The model is random, so replies are steered (engine_helpers.steered): it thinks "The user says
hi" and answers "Hello there"; with tools offered, and no tool result yet, it calls the first
tool (in its namespace) with {"city": "Tokyo"}. A user message starting with "free" is not
steered (the seed test), and one starting with "slow" never stops and is slowed down (the
cancel tests).
`serve_process` runs the command itself instead, for what only a process shows (its log on
stderr, signals, the listening socket's backlog).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from engine_helpers import never_stop, open_tiny, steered

from gptoss_local.backends.base import BackendError, GenerationSettings, Reply, ReplyRequest, Stats
from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
from gptoss_local.backends.llamacpp.options import LlamaOptions
from gptoss_local.backends.ollama.probe import free_port
from gptoss_local.conversation import Conversation
from gptoss_local.events import Event, ReasoningDelta
from gptoss_local.serve.guard import Guard
from gptoss_local.serve.server import ApiServer, make_server
from gptoss_local.serve.service import Service

CALL_GRAMMAR = (
    'root ::= <|channel|> "analysis" <|message|> "Need the weather" <|end|> '
    '<|start|> "assistant" <|channel|> "commentary to=RECIPIENT" <|message|> '
    '"{\\"city\\": \\"Tokyo\\"}"'
)
SLOW_SECONDS = 0.01  # per event of a "slow" reply


@dataclass
class Seen:
    """What the backend was asked, and how each reply ended."""

    conversations: list[Conversation] = field(default_factory=list)
    settings: list[GenerationSettings] = field(default_factory=list)
    stats: list[Stats] = field(default_factory=list)
    ended: threading.Event = field(default_factory=threading.Event)


class Steering:
    """The server's `stream` hook: the steered options for each request, recorded."""

    def __init__(self, backend: LlamaCppBackend) -> None:
        self.backend, self.seen = backend, Seen()
        self._reply = steered(backend)
        ban = tuple(
            (backend.tokenize(t)[0], float("-inf")) for t in ("<|return|>", "<|endoftext|>")
        )
        self._call = replace(self._reply, logit_bias=ban)

    def __call__(self, request: ReplyRequest, cancel: threading.Event) -> Reply:
        conversation = request.conversation
        self.seen.conversations.append(conversation)
        self.seen.settings.append(request.settings)
        last = conversation.messages[-1]
        slow = last.role == "user" and last.content.startswith("slow")
        if last.role == "user" and last.content.startswith("fail"):
            return Reply(_failing())
        options = self._options(conversation)
        reply = self.backend.stream(request, cancel, options=options)
        return Reply(self._recorded(reply, slow))

    def _options(self, conversation: Conversation) -> LlamaOptions:
        last = conversation.messages[-1]
        if last.role == "user" and last.content.startswith("free"):
            return LlamaOptions()
        if last.role == "user" and last.content.startswith("slow"):
            return LlamaOptions(logit_bias=never_stop(self.backend))
        if conversation.tools and last.role != "tool":
            tool = conversation.tools[0]
            recipient = f"{tool.namespace}.{tool.name}"
            return replace(self._call, grammar=CALL_GRAMMAR.replace("RECIPIENT", recipient))
        return self._reply

    def _recorded(self, reply: Reply, slow: bool) -> Generator[Event, None, Stats]:
        try:
            for event in reply:
                if slow:
                    time.sleep(SLOW_SECONDS)
                yield event
        finally:
            if reply.stats is not None:
                self.seen.stats.append(reply.stats)
            self.seen.ended.set()
        assert reply.stats is not None
        return reply.stats


def _failing() -> Generator[Event, None, Stats]:
    """A reply that breaks after its first words, as a crashed engine's would."""
    yield ReasoningDelta("The user")
    raise BackendError("llama_decode failed", kind="decode_failed")


@dataclass
class Running:
    """A server running on a thread: its base URL (with /v1), and what its backend saw."""

    server: ApiServer
    steering: Steering

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    @property
    def seen(self) -> Seen:
        return self.steering.seen


@contextmanager
def running_server(
    gguf: Path,
    api_key: str | None = None,
    cors: tuple[str, ...] = (),
    max_waiting: int = 64,
    sequences: int = 1,
    context: int = 2048,
    steer: type[Steering] = Steering,
) -> Iterator[Running]:
    """The tiny model served on 127.0.0.1 and a free port until the block ends, decoding
    `sequences` replies together, steered by `steer`."""
    with open_tiny(gguf, sequences=sequences, context=context) as backend:
        steering = steer(backend)
        names = ("gpt-oss-tiny", "tiny")
        service = Service(backend, names, GenerationSettings(), max_waiting, stream=steering)
        server = make_server(service, Guard("127.0.0.1", 0, api_key, cors))
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield Running(server, steering)
        finally:
            server.stop()
            thread.join(timeout=10)


@dataclass
class ServeProcess:
    """`gptoss-local serve` in a subprocess: its port and the lines of its stderr so far."""

    process: subprocess.Popen[str]
    port: int
    lines: list[str]

    def log(self) -> str:
        return "".join(self.lines)


@contextmanager
def serve_process(gguf: Path, home: Path, *flags: str) -> Iterator[ServeProcess]:
    """The command serving `gguf` on 127.0.0.1 (context 2048 unless `flags` say otherwise),
    once it says it is serving; killed at the end if it still runs."""
    port = free_port()
    command = [sys.executable, "-m", "gptoss_local", "serve", "--model-path", str(gguf),
               "--context", "2048", "--port", str(port), *flags]  # fmt: skip
    env = {**os.environ, "GPTOSS_LOCAL_HOME": str(home)}
    process = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    serving = threading.Event()

    def read() -> None:  # a thread, so that a full pipe never stalls the server
        assert process.stderr is not None
        for line in process.stderr:
            lines.append(line)
            if line.startswith("serving"):
                serving.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 120
        while not serving.wait(0.1):
            assert process.poll() is None, "".join(lines)
            assert time.monotonic() < deadline, "serve did not start"
        yield ServeProcess(process, port, lines)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(30)
        reader.join(10)


def until(condition: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    """Poll `condition` until it holds; fail naming `what` if it never does (an ordering the
    tests wait for, where a fixed sleep would check less on a slow machine)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)  # polling a condition with a deadline, not a fixed wait
