"""`gptoss-local run [PROMPT]`: one answer, scriptable; the answer to stdout, the rest to stderr."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, TextIO

from gptoss_local import config
from gptoss_local.backends.base import Backend, Conversation, GenerationSettings, Stats
from gptoss_local.errors import WishError
from gptoss_local.events import AnswerDelta, Event, PreambleDelta, ReasoningDelta, ToolCall
from gptoss_local.harmony import Message, render_prompt
from gptoss_local.harmony.tools import function_tool
from gptoss_local.plan.wishes import wishes_from
from gptoss_local.setup.first_run import Setup


def run_run(args: argparse.Namespace) -> int:
    """Answer one prompt; exit 130 when interrupted."""
    settings = config.load()
    wishes = wishes_from(args, settings)
    conversation = Conversation(
        messages=(Message(role="user", content=_read_prompt(args)),),
        instructions=args.instructions,
        tools=_load_tools(args.tools),
        current_date=args.date,
    )
    if args.print_prompt:
        c = conversation
        text = render_prompt(
            list(c.messages), effort=wishes.effort, instructions=c.instructions,
            tools=list(c.tools), current_date=c.current_date,
        )  # fmt: skip
        sys.stdout.write(text + "\n")
        return 0
    setup = Setup.probe(wishes, settings)
    wishes = setup.initial()
    ready = setup.ready(wishes, setup.plan(wishes))
    for warning in ready.warnings:
        _stderr(f"warning: {warning}")
    generation = replace(
        ready.generation,
        max_tokens=args.max_tokens,
        temperature=args.temperature,
        top_p=args.top_p,
        seed=args.seed,
    )
    backend = ready.open(_LoadNotes())
    try:
        return _stream(backend, conversation, generation, args)
    finally:
        backend.close()


class _LoadNotes:
    """Load progress on stderr: each new step once (starting Ollama, pulling a tag), not every
    fraction of a llama.cpp load."""

    def __init__(self) -> None:
        self._last = ""

    def __call__(self, fraction: float, what: str) -> bool:
        if what and what != self._last and not what.startswith("loading"):
            _stderr(what)
        self._last = what
        return True


def _stream(
    backend: Backend,
    conversation: Conversation,
    generation: GenerationSettings,
    args: argparse.Namespace,
) -> int:
    cancel = threading.Event()
    previous = signal.signal(signal.SIGINT, lambda *_: _interrupt(cancel))
    writer = _JsonWriter(sys.stdout) if args.json else None
    try:
        reply = backend.stream(conversation, generation, cancel)
        for event in reply:
            if writer:
                writer.event(event)
            elif isinstance(event, (AnswerDelta, PreambleDelta)):
                sys.stdout.write(event.text)
                sys.stdout.flush()
            elif isinstance(event, ReasoningDelta) and args.show_reasoning:
                _stderr(event.text, end="")
            elif isinstance(event, ToolCall):
                _stderr(f"\n[tool call] {event.name} {json.dumps(event.arguments)}")
        if writer:
            writer.done(reply.stats)
        else:
            sys.stdout.write("\n")
            if reply.stats is not None and reply.stats.stop_reason == "length":
                _stderr("[stopped: --max-tokens reached]")
    finally:
        signal.signal(signal.SIGINT, previous)
    return 130 if cancel.is_set() else 0


def _interrupt(cancel: threading.Event) -> None:
    if cancel.is_set():
        raise KeyboardInterrupt  # a second Ctrl-C: stop at once
    cancel.set()


class _JsonWriter:
    """Events as JSON lines; consecutive deltas of one kind are sent as they come."""

    def __init__(self, out: TextIO) -> None:
        self._out = out

    def event(self, event: Event) -> None:
        if isinstance(event, ReasoningDelta):
            record: dict[str, Any] = {"type": "reasoning", "text": event.text}
        elif isinstance(event, (AnswerDelta, PreambleDelta)):
            kind = "answer" if isinstance(event, AnswerDelta) else "preamble"
            record = {"type": kind, "text": event.text}
        elif isinstance(event, ToolCall):
            record = {"type": "tool_call", "name": event.name, "arguments": event.arguments}
            if event.error:
                record.update(error=event.error, raw=event.raw)
        else:
            return
        self._write(record)

    def done(self, stats: Stats | None) -> None:
        """The last line: what the reply cost."""
        self._write({"type": "done", "stats": asdict(stats) if stats else None})

    def _write(self, record: dict[str, Any]) -> None:
        self._out.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._out.flush()


def _read_prompt(args: argparse.Namespace) -> str:

    if args.prompt is not None:
        return str(args.prompt)
    if sys.stdin is None or sys.stdin.isatty():
        raise WishError('give a prompt: gptoss-local run "your question" (or pipe it in)')
    raw = sys.stdin.buffer.read()
    try:
        text = raw.decode("utf-8-sig")  # a BOM, as some Windows editors write, is not text
    except UnicodeDecodeError as exc:
        raise WishError(
            f"the prompt read from stdin is not UTF-8 text (byte 0x{raw[exc.start]:02x} at "
            f"offset {exc.start}); convert it first, e.g. `iconv -f latin1 -t utf-8`"
        ) from None
    if not text.strip():
        raise WishError("the prompt read from stdin is empty")
    return text


def _load_tools(path: Path | None) -> tuple[Any, ...]:
    if path is None:
        return ()

    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except RecursionError:
        raise WishError(f"cannot read tools from {path}: its JSON is nested too deeply") from None
    except (OSError, ValueError) as exc:
        raise WishError(f"cannot read tools from {path}: {exc}") from None
    if not isinstance(raw, list):
        raise WishError(f"{path}: expected a JSON list of function tools, not {_kind(raw)}")
    tools = []
    for index, item in enumerate(raw):
        try:
            tools.append(function_tool(item, index))
        except ValueError as exc:
            raise WishError(f"{path}: {exc}") from None
    return tuple(tools)


def _kind(value: object) -> str:
    names: dict[type, str] = {dict: "an object", str: "a string"}
    return names.get(type(value), type(value).__name__)


def _stderr(text: str, end: str = "\n") -> None:
    sys.stderr.write(text + end)
    sys.stderr.flush()
