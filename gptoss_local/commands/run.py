"""`gptoss-local run [PROMPT]`: one answer, scriptable; the answer to stdout, the rest to stderr."""

from __future__ import annotations

import argparse
import fnmatch
import json
import signal
import sys
import threading
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, TextIO

from gptoss_local import config
from gptoss_local.attachments import estimate_tokens, read_attachment, with_attachments
from gptoss_local.backends.base import (
    Backend,
    ReplyRequest,
    ResponseFormat,
    Stats,
    ToolChoice,
)
from gptoss_local.chat.context_budget import Budget, ContextFull, fit
from gptoss_local.chat.context_keeper import prompt_counter
from gptoss_local.commands.notes import LoadNotes, note, warn
from gptoss_local.commands.run_request import (
    answer_problem,
    kind_of,
    response_format,
    tool_choice,
)
from gptoss_local.config import Settings
from gptoss_local.conversation import Citation, Conversation, Message, Tool, file_link
from gptoss_local.errors import WishError
from gptoss_local.events import AnswerDelta, PreambleDelta, ReasoningDelta, ToolCall
from gptoss_local.harmony import render_prompt
from gptoss_local.harmony.names import OPENAI_NAMES, ToolNames
from gptoss_local.harmony.tools import function_tool, offered_names
from gptoss_local.i18n import _
from gptoss_local.launch.engine_switch import ask_on_terminal
from gptoss_local.launch.prepare import prepare
from gptoss_local.launch.resident import over_engine
from gptoss_local.plan.wishes import Wishes, wishes_from
from gptoss_local.tools import (
    Approvals,
    ChainEnded,
    LoopEvent,
    ReplyEnded,
    ToolCallFinished,
    ToolLoop,
    ToolRegistry,
    open_tools,
)
from gptoss_local.tools.browser_tool import NAME as BROWSER
from gptoss_local.tools.python_tool import NAME as PYTHON


def run_run(args: argparse.Namespace) -> int:
    """Answer one prompt; exit 130 when interrupted, 1 when the answer (printed all the same)
    does not match `--schema`."""
    settings = config.load()
    wishes = wishes_from(args, settings)
    fmt = response_format(args.schema)
    prompt = _read_prompt(args)
    attached = [read_attachment(path, root=Path.cwd(), count_tokens=estimate_tokens)
                for path in args.files]  # fmt: skip
    conversation = Conversation(
        messages=(Message(role="user", content=with_attachments(prompt, attached)),),
        instructions=args.instructions,
        current_date=args.date,
    )
    functions, names = _load_tools(args.tools)
    registry = _registry(args.allow_tool, functions, f"--tools {args.tools}", settings)
    try:
        conversation = registry.offer(conversation)
        if args.print_prompt:
            c = conversation
            text = render_prompt(
                list(c.messages), effort=wishes.effort, instructions=c.instructions,
                tools=list(c.tools), current_date=c.current_date,
                builtin_tools=list(c.builtin_tools),
            )  # fmt: skip
            sys.stdout.write(text + "\n")
            return 0
        choice = tool_choice(args.tool_choice, conversation, names)
        return _answer(args, settings, wishes, conversation, registry, fmt, choice, names)
    finally:
        registry.close()


def _registry(
    allowed: list[str], functions: tuple[Tool, ...], source: str, settings: Settings
) -> ToolRegistry:
    """The tools `--allow-tool` names (run without asking) and the `--tools` functions (offered,
    never run). A name that matches no tool is an error."""
    wanted = list(dict.fromkeys(allowed))
    registry = ToolRegistry()
    if wanted:
        python = any(fnmatch.fnmatchcase(PYTHON, name) for name in wanted)
        browser = any(fnmatch.fnmatchcase(BROWSER, name) for name in wanted)
        mcp = any(name not in (PYTHON, BROWSER) for name in wanted)
        registry = open_tools(settings, label="run", python=python, mcp=mcp, strict=True,
                              browser=browser)  # fmt: skip
        registry.keep(lambda found: any(fnmatch.fnmatchcase(found, name) for name in wanted))
        names = [info.name for info in registry.infos()]
        missing = [w for w in wanted if not any(fnmatch.fnmatchcase(n, w) for n in names)]
        if missing:
            registry.close()
            problems = "; ".join(registry.problems)
            message = (
                _("--allow-tool {name}: no such tool ({problems})")
                if problems
                else _("--allow-tool {name}: no such tool")
            )
            raise WishError(
                message.format(name=missing[0], problems=problems),
                _("see the tools there are with `gptoss-local tools`"),
            )
    registry.add_functions(functions, source)
    for problem in registry.problems:
        warn(problem)
    return registry


def _answer(
    args: argparse.Namespace,
    settings: Settings,
    wishes: Wishes,
    conversation: Conversation,
    registry: ToolRegistry,
    fmt: ResponseFormat | None,
    choice: ToolChoice,
    names: ToolNames,
) -> int:
    local = prepare(wishes, settings, warn=warn).ready
    assert local is not None  # made ready: `run` asks nothing first
    background = settings.engine_start == "background"
    # The machine's engine, if it has (or takes) the model; the tools still run here.
    ask = ask_on_terminal(args.switch)
    ready = over_engine(local, wishes, background, note, "gptoss-local run", ask)
    generation = replace(
        ready.generation,
        max_tokens=args.max_tokens,
        temperature=args.temperature,
        top_p=args.top_p,
        seed=args.seed,
    )
    backend = ready.open(LoadNotes())
    try:
        loop = ToolLoop(backend, registry, Approvals(args.allow_tool),
                        max_calls=settings.max_tool_calls)  # fmt: skip
        request = loop.offer(ReplyRequest(conversation, generation, fmt, choice))
        _check_room(backend, request)
        return _stream(loop, request, args, names)
    finally:
        backend.close()


def _stream(
    loop: ToolLoop, request: ReplyRequest, args: argparse.Namespace, names: ToolNames | None = None
) -> int:
    """Write the run's events (a `--tools` function's call by the name the file gives it,
    `names`, when a file gave any); the exit code."""
    fmt = request.response_format
    cancel = threading.Event()
    previous = signal.signal(signal.SIGINT, lambda *_args: _interrupt(cancel))
    writer = _JsonWriter(sys.stdout) if args.json else None
    stats: Stats | None = None
    turn: list[str] = []  # the answer of the turn streaming now
    answer, ended = "", "answered"
    citations: tuple[Citation, ...] = ()
    try:
        for event in loop.run(request, cancel):
            if names is not None and isinstance(event, ToolCall):
                event = replace(event, name=names.called(event.name))
            if isinstance(event, ReplyEnded):
                stats, answer, turn = event.stats, "".join(turn), []
                citations = event.citations
            elif isinstance(event, ChainEnded):
                ended = event.reason
            elif writer:
                writer.event(event)
            else:
                _show(event, args.show_reasoning, answer_only=fmt is not None)
            if isinstance(event, AnswerDelta):
                turn.append(event.text)
        if writer:
            writer.cited(citations)
            writer.done(stats)
        else:
            sys.stdout.write("\n")
            for citation in citations:
                _stderr(
                    _("[source] {marker} {label} {link}").format(
                        marker=citation.marker, label=citation.label, link=file_link(citation)
                    )
                )
            if stats is not None and stats.stop_reason == "length":
                _stderr(_("[stopped: --max-tokens reached]"))
    finally:
        signal.signal(signal.SIGINT, previous)
    if cancel.is_set():
        return 130
    # A call of a --tools function ends the run with no answer: it is the caller's turn.
    if fmt is None or ended == "external_call":
        return 0
    return _check(answer, fmt)


def _check_room(backend: Backend, request: ReplyRequest) -> None:
    """Refuse, with its token count and the room, a prompt (stdin, attached files) that leaves
    the context too little room for the reply, before anything is generated."""
    size, settings = backend.info().context_size, request.settings
    if not size:
        return
    count = prompt_counter(backend, request)
    try:
        fit(request.conversation.messages, count, Budget(size, settings.effort), "stop")
    except ContextFull as exc:
        room = _("{room:,} tokens").format(room=exc.room)
        raise WishError(
            _(
                "the prompt is {needed:,} tokens; the {size:,}-token context has room for {room} "
                "after keeping {reply:,} for the reply"
            ).format(
                needed=exc.needed,
                size=size,
                room=room,
                reply=Budget(size, settings.effort).reply_room,
            ),
            _("load the model with a larger --context, or send less (a part of the file)"),
        ) from None


def _check(answer: str, fmt: ResponseFormat) -> int:
    """Exit 1, saying why on stderr, when the answer (printed already) misses the schema."""
    problem = answer_problem(answer, fmt)
    if problem is None:
        return 0
    _stderr(_("gptoss-local: error: {error}").format(error=problem))
    return 1


def _show(event: LoopEvent, show_reasoning: bool, answer_only: bool = False) -> None:
    """One event as text: the answer to stdout (preambles too, unless `answer_only`: then
    stdout is the answer alone), tool calls and results to stderr."""
    if isinstance(event, AnswerDelta) or (isinstance(event, PreambleDelta) and not answer_only):
        sys.stdout.write(event.text)
        sys.stdout.flush()
    elif isinstance(event, PreambleDelta) or (isinstance(event, ReasoningDelta) and show_reasoning):
        _stderr(event.text, end="")
    elif isinstance(event, ToolCall):
        arguments = json.dumps(event.arguments, ensure_ascii=False)
        _stderr(
            "\n" + _("[tool call] {name} {arguments}").format(name=event.name, arguments=arguments)
        )
    elif isinstance(event, ToolCallFinished):
        line = (
            _("[tool error] {name}: {preview}")
            if event.output.error
            else _("[tool result] {name}: {preview}")
        )
        _stderr(line.format(name=event.call.name, preview=event.output.preview()))
        if event.output.note:
            _stderr(_("[note] {note}").format(note=event.output.note))


def _interrupt(cancel: threading.Event) -> None:
    if cancel.is_set():
        raise KeyboardInterrupt  # a second Ctrl-C: stop at once
    cancel.set()


class _JsonWriter:
    """Events as JSON lines; consecutive deltas of one kind are sent as they come."""

    def __init__(self, out: TextIO) -> None:
        self._out = out

    def event(self, event: LoopEvent) -> None:
        record: dict[str, Any]
        if isinstance(event, ToolCallFinished):
            out = event.output
            record = {"type": "tool_result", "name": event.call.name, "content": out.content,
                      "error": out.error}  # fmt: skip
            if out.truncated:
                record["truncated"] = True
            if out.note:
                record["note"] = out.note
        elif isinstance(event, ReasoningDelta):
            record = {"type": "reasoning", "text": event.text}
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

    def cited(self, citations: tuple[Citation, ...]) -> None:
        """The files and lines the answer cites (the browser's), when it cites any."""
        if citations:
            self._write({"type": "citations", "citations": [asdict(c) for c in citations]})

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
        raise WishError(_('give a prompt: gptoss-local run "your question" (or pipe it in)'))
    raw = sys.stdin.buffer.read()
    try:
        text = raw.decode("utf-8-sig")  # a BOM, as some Windows editors write, is not text
    except UnicodeDecodeError as exc:
        raise WishError(
            _(
                "the prompt read from stdin is not UTF-8 text (byte 0x{byte:02x} at "
                "offset {offset}); convert it first, e.g. `iconv -f latin1 -t utf-8`"
            ).format(byte=raw[exc.start], offset=exc.start)
        ) from None
    if not text.strip():
        raise WishError(_("the prompt read from stdin is empty"))
    return text


def _load_tools(path: Path | None) -> tuple[tuple[Tool, ...], ToolNames]:
    """The functions of a `--tools` file, by the model's names for them, and those names
    (a name such as ``get-weather`` is ``get_weather`` in the prompt)."""
    if path is None:
        return (), ToolNames()

    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except RecursionError:
        raise WishError(
            _("cannot read tools from {path}: its JSON is nested too deeply").format(path=path)
        ) from None
    except (OSError, ValueError) as exc:
        raise WishError(
            _("cannot read tools from {path}: {error}").format(path=path, error=exc)
        ) from None
    if not isinstance(raw, list):
        raise WishError(
            _("{path}: expected a JSON list of function tools, not {kind}").format(
                path=path, kind=kind_of(raw)
            )
        )
    tools = []
    names = ToolNames(offered_names(raw), OPENAI_NAMES)
    for index, item in enumerate(raw):
        try:
            tools.append(function_tool(item, index, names))
        except ValueError as exc:
            raise WishError(f"{path}: {exc}") from None
    return tuple(tools), names


def _stderr(text: str, end: str = "\n") -> None:
    sys.stderr.write(text + end)
    sys.stderr.flush()
