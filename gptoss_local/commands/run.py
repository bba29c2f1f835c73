"""`gptoss-local run [PROMPT]`: one answer, scriptable; the answer to stdout, the rest to stderr."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import signal
import sys
import threading
from pathlib import Path
from typing import Any, TextIO

from gptoss_local.commands.arg_types import bounded_float, positive_int


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `run`."""
    parser.add_argument("prompt", nargs="?", help="the question (default: read from stdin)")
    parser.add_argument("--model-path", type=Path, metavar="FILE", help="any gpt-oss GGUF file")
    parser.add_argument(
        "--backend", choices=("llamacpp", "ollama"),
        help="engine (default: the settings file's, else llamacpp)",
    )  # fmt: skip
    parser.add_argument("--instructions", help="instructions for the model (a system prompt)")
    parser.add_argument(
        "--max-tokens", type=positive_int, metavar="N", help="stop after N generated tokens"
    )
    parser.add_argument("--seed", type=int, help="sampling seed, for repeatable output")
    parser.add_argument(
        "--temperature", type=bounded_float(0.0, 100.0), default=1.0,
        help="default 1.0; 0 = greedy",
    )  # fmt: skip
    parser.add_argument(
        "--top-p", type=bounded_float(0.0, 1.0, low_open=True), default=1.0,
        help="default 1.0 (off)",
    )  # fmt: skip
    parser.add_argument("--tools", type=Path, metavar="FILE", help="JSON list of function tools")
    parser.add_argument(
        "--cpu-sampling", action="store_true",
        help="pick tokens on the CPU even when the model runs on a GPU (default: on the GPU)",
    )  # fmt: skip
    parser.add_argument(
        "--show-reasoning", action="store_true", help="print the reasoning to stderr"
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per line on stdout")
    parser.add_argument(
        "--print-prompt", action="store_true", help="print the exact Harmony prompt and exit"
    )
    parser.add_argument(
        "--date", type=dt.date.fromisoformat, metavar="YYYY-MM-DD", help="current date"
    )


def run_run(args: argparse.Namespace) -> int:
    """Answer one prompt; exit 130 when interrupted."""
    from gptoss_local import config
    from gptoss_local.backends.base import Conversation, GenerationSettings
    from gptoss_local.harmony import Message, render_prompt

    settings = config.load()
    args.backend = args.backend or settings.backend
    prompt = _read_prompt(args)
    effort = args.effort or settings.effort
    conversation = Conversation(
        messages=(Message(role="user", content=prompt),),
        instructions=args.instructions,
        tools=_load_tools(args.tools),
        current_date=args.date,
    )
    if args.print_prompt:
        c = conversation
        text = render_prompt(
            list(c.messages), effort=effort, instructions=c.instructions,
            tools=list(c.tools), current_date=c.current_date,
        )  # fmt: skip
        sys.stdout.write(text + "\n")
        return 0
    generation = GenerationSettings(
        effort=effort,
        max_tokens=args.max_tokens,
        temperature=args.temperature,
        top_p=args.top_p,
        seed=args.seed,
    )
    if args.backend == "ollama":
        from gptoss_local.runner import open_ollama

        with open_ollama(args, settings, notice=_stderr)[0] as served:
            return _stream(served, conversation, generation, args)
    from gptoss_local.runner import open_backend

    backend = open_backend(args, settings, notice=_stderr)
    if backend.settings.gpu_layers != 0 and not args.cpu_sampling:
        from dataclasses import replace

        # Sampling inside the GPU graph: measured 306 vs 193 t/s at gpt-oss's defaults on an H200.
        generation = replace(generation, backend_sampling=True)
    try:
        return _stream(backend, conversation, generation, args)
    finally:
        backend.close()


def _stream(backend: Any, conversation: Any, generation: Any, args: argparse.Namespace) -> int:
    from gptoss_local.backends.base import Finished
    from gptoss_local.events import AnswerDelta, PreambleDelta, ReasoningDelta, ToolCall

    cancel = threading.Event()
    previous = signal.signal(signal.SIGINT, lambda *_: _interrupt(cancel))
    writer = _JsonWriter(sys.stdout) if args.json else None
    try:
        for event in backend.stream(conversation, generation, cancel):
            if writer:
                writer.event(event)
            elif isinstance(event, (AnswerDelta, PreambleDelta)):
                sys.stdout.write(event.text)
                sys.stdout.flush()
            elif isinstance(event, ReasoningDelta) and args.show_reasoning:
                _stderr(event.text, end="")
            elif isinstance(event, ToolCall):
                _stderr(f"\n[tool call] {event.name} {json.dumps(event.arguments)}")
            elif isinstance(event, Finished) and not args.json:
                sys.stdout.write("\n")
                if event.stats.stop_reason == "length":
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

    def event(self, event: Any) -> None:
        from gptoss_local.backends.base import Finished
        from gptoss_local.events import AnswerDelta, PreambleDelta, ReasoningDelta, ToolCall

        if isinstance(event, ReasoningDelta):
            record: dict[str, Any] = {"type": "reasoning", "text": event.text}
        elif isinstance(event, (AnswerDelta, PreambleDelta)):
            kind = "answer" if isinstance(event, AnswerDelta) else "preamble"
            record = {"type": kind, "text": event.text}
        elif isinstance(event, ToolCall):
            record = {"type": "tool_call", "name": event.name, "arguments": event.arguments}
            if event.error:
                record.update(error=event.error, raw=event.raw)
        elif isinstance(event, Finished):
            from dataclasses import asdict

            record = {"type": "done", "stats": asdict(event.stats)}
        else:
            return
        self._out.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._out.flush()


def _read_prompt(args: argparse.Namespace) -> str:
    from gptoss_local.errors import WishError

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
    from gptoss_local.errors import WishError
    from gptoss_local.harmony import Tool, render_prompt
    from gptoss_local.harmony.schema import check

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
        spec = item.get("function", item) if isinstance(item, dict) else item
        name = spec.get("name") if isinstance(spec, dict) else None
        if not isinstance(name, str) or not name:
            raise WishError(f'{path}: tool {index} needs a "name" (a JSON object with one)')
        description, parameters = spec.get("description", ""), spec.get("parameters")
        if not isinstance(description, str) or not isinstance(parameters, (dict, type(None))):
            raise WishError(
                f'{path}: tool {name!r}: "description" must be text and "parameters" '
                "a JSON schema object"
            )
        try:
            tool = Tool(name, description, parameters)
            if parameters is not None:
                check(parameters)  # rendering takes anything; a person's mistake is told here
            render_prompt([], tools=[tool])
        except ValueError as exc:  # a name that is not an identifier
            raise WishError(f"{path}: tool {name!r} cannot be offered: {exc}") from None
        except (TypeError, AttributeError, KeyError, RecursionError) as exc:
            raise WishError(
                f'{path}: tool {name!r}: its "parameters" schema is malformed ({exc})'
            ) from None
        tools.append(tool)
    return tuple(tools)


def _kind(value: object) -> str:
    names: dict[type, str] = {dict: "an object", str: "a string"}
    return names.get(type(value), type(value).__name__)


def _stderr(text: str, end: str = "\n") -> None:
    sys.stderr.write(text + end)
    sys.stderr.flush()
