"""The `gptoss-local` command line: parse, call one service, print.

Heavy modules (llama_cpp, textual, pynvml, psutil) are imported inside the commands that need them,
so `gptoss-local --help` costs little more than starting Python.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from gptoss_local import __version__, config
from gptoss_local.commands import arguments
from gptoss_local.commands.arg_types import gpu_numbers
from gptoss_local.commands.argparse_words import translate_argparse
from gptoss_local.errors import UserError
from gptoss_local.i18n import _, set_language
from gptoss_local.kinds import BACKENDS, EFFORTS

# Each command's handler as "module:function", imported only when that command runs.
HANDLERS = {
    "doctor": "gptoss_local.commands.doctor:run_doctor",
    "run": "gptoss_local.commands.run:run_run",
    "bench": "gptoss_local.commands.bench:run_bench",
    "pull": "gptoss_local.commands.pull:run_pull",
    "models": "gptoss_local.commands.models:run_models",
    "list": "gptoss_local.commands.models:run_models",
    "verify": "gptoss_local.commands.verify:run_verify",
    "rm": "gptoss_local.commands.rm:run_rm",
    "import": "gptoss_local.commands.import_model:run_import",
    "chats": "gptoss_local.commands.chats:run_chats",
    "chat": "gptoss_local.commands.chat:run_chat",
    "tools": "gptoss_local.commands.tools:run_tools",
    "docs": "gptoss_local.commands.docs:run_docs",
    "serve": "gptoss_local.commands.serve:run_serve",
    "codex": "gptoss_local.commands.codex:run_codex",
    "engine": "gptoss_local.commands.engine:run_engine",
}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every working command."""
    parser = argparse.ArgumentParser(
        prog="gptoss-local",
        description=_("Run OpenAI's gpt-oss models privately and offline on your NVIDIA RTX PC."),
    )
    parser.add_argument(
        "--version", action="version", version=f"gptoss-local {__version__}",
        help=_("show program's version number and exit"),
    )  # fmt: skip
    parser.add_argument(
        "--lang", metavar="LANG",
        help=_("the language of what gptoss-local shows: en, zh_CN or pt_BR (default: the "
            "settings file's language, else your locale)"),
    )  # fmt: skip
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    doctor = commands.add_parser(
        "doctor",
        help=_("show the GPUs, memory and engine found, and which model would run and why"),
        description=_(
            "Show the GPUs, memory, disk and engine found, and the plan: which model, "
            "where its parts go, how much memory it takes, and why."
        ),
    )
    doctor.add_argument(
        "--json", action="store_true", help=_("print one JSON document (see docs/doctor-json.md)")
    )
    _add_wish_arguments(doctor)
    run = commands.add_parser(
        "run",
        help=_("answer one prompt and exit (scriptable)"),
        description=_(
            "Answer one prompt with a local gpt-oss model: the answer goes to stdout, "
            "reasoning to stderr with --show-reasoning, or everything as JSON lines with --json."
        ),
    )
    _add_wish_arguments(run, backend=False)  # run adds its own --backend
    arguments.run_arguments(run)
    bench = commands.add_parser(
        "bench",
        help=_("measure prefill and decode speed of the planned model on this machine"),
        description=_(
            "Load the planned model (or --model-path) and measure prompt evaluation and "
            "generation speed with gpt-oss's sampling settings and greedy decoding; compares the "
            "result with the known-good range for your GPU when there is one."
        ),
    )
    _add_wish_arguments(bench, backend=False)
    arguments.bench_arguments(bench)
    chat = commands.add_parser(
        "chat",
        help=_("chat with a local gpt-oss model in the terminal (saved in the history)"),
        description=_(
            "Open the chat TUI on the planned model (or --model-path): streamed replies with "
            "their reasoning, switchable effort, stop with Esc; chats are saved as they stream."
        ),
    )
    _add_wish_arguments(chat, backend=False)
    arguments.chat_arguments(chat)
    serve = commands.add_parser(
        "serve",
        help=_("serve the model to other programs through the OpenAI API (loopback by default)"),
        description=_(
            "Load the planned model (or --model-path) once and serve it at "
            "http://HOST:PORT/v1 with the OpenAI API: /v1/models, /v1/chat/completions and "
            "/v1/responses, streamed or not, reasoning apart from the answer, tools. Listens on "
            "127.0.0.1 unless told otherwise; any other address needs --api-key."
        ),
    )
    _add_wish_arguments(serve, backend=False)
    arguments.serve_arguments(serve)
    codex = commands.add_parser(
        "codex",
        help=_("run OpenAI's Codex CLI on the local model"),
        description=_(
            "Run Codex CLI (npm i -g @openai/codex) on the local model: uses the gptoss-local "
            "serve running on --port, or loads the planned model (with at least a 32k context "
            "where memory allows) and serves it while Codex runs; gives Codex a profile of its "
            "own ($CODEX_HOME/gptoss-local.config.toml). Arguments after the options go to Codex: "
            'gptoss-local codex exec "explain this repository"'
        ),
    )
    _add_wish_arguments(codex, backend=False)
    arguments.codex_arguments(codex)
    _add_store_commands(commands)
    arguments.chats_arguments(
        commands.add_parser(
            "chats",
            help=_("list the saved chats, or export one (chats export ID --format md|json)"),
            description=_(
                "List the saved chats (id, title, last update, messages, model), or "
                "export one with its reasoning and per-message stats as Markdown or JSON."
            ),
        )
    )
    arguments.tools_arguments(
        commands.add_parser(
            "tools",
            help=_("list the tools the model can use (python, MCP servers), or call one"),
            description=_(
                "List every tool the model can be offered: the built-in python tool "
                "(and what its sandbox enforces here) and the tools of the MCP servers in mcp.json "
                "in the config folder; or call one directly with `tools call NAME JSON`."
            ),
        )
    )
    arguments.docs_arguments(
        commands.add_parser(
            "docs",
            help=_("the folders the browser tool searches offline: list, add, rm, reindex"),
            description=_(
                "The folders whose files the model's browser tool searches and opens, offline: "
                "text, Markdown, code, HTML and PDF, indexed in the data folder. `docs add PATH` "
                "adds and indexes, `docs rm PATH` removes, `docs reindex` reads what changed."
            ),
        )
    )
    arguments.engine_arguments(
        commands.add_parser(
            "engine",
            help=_(
                "show what the llama.cpp engine is built with; `engine install --cuda` "
                "rebuilds it for the GPU"
            ),
            description=_(
                "Show the installed llama-cpp-python: version, GPU offload, backends, "
                "CUDA architectures and runtime. `engine install --cuda` rebuilds it for this PC's "
                "GPU."
            ),
        )
    )
    return parser


def _add_store_commands(commands: argparse._SubParsersAction) -> None:
    arguments.pull_arguments(
        commands.add_parser(
            "pull",
            help=_("download a model (resumable, verified), or reuse a copy already on this PC"),
            description=_(
                "Download the model's files into the models folder, verified against "
                "the manifest's sha256; resumes after an interruption, retries, falls back to "
                "the next source, and reuses copies from the Hugging Face, llama.cpp or LM Studio "
                "caches."
            ),
        )
    )
    arguments.models_arguments(
        commands.add_parser(
            "models",
            aliases=["list"],
            help=_(
                "list the models with their state (absent, partial, present, verified, corrupt)"
            ),
            description=_("List each model of the manifest with its state, size and path."),
        )
    )
    arguments.verify_arguments(
        commands.add_parser(
            "verify",
            help=_("hash downloaded models again and check them"),
            description=_("Hash the model files again against the manifest and check the GGUF."),
        )
    )
    arguments.rm_arguments(
        commands.add_parser(
            "rm",
            help=_("delete a model's files"),
            description=_("Delete a model's files, after asking."),
        )
    )
    arguments.import_model_arguments(
        commands.add_parser(
            "import",
            help=_("adopt a model file downloaded by hand, after verifying it"),
            description=_(
                "Verify a file you downloaded yourself against the manifest (size, "
                "sha256, GGUF structure) and hard-link, copy or move it into the models folder."
            ),
        )
    )


def _parse(argv: list[str]) -> argparse.Namespace:
    """The command line; `codex` passes what follows its own options on to Codex."""
    parser = build_parser()
    if argv[:1] != ["codex"]:
        return parser.parse_args(argv)
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    ours, passed_on = arguments.split_passed_on(commands.choices["codex"], argv[1:])
    args = parser.parse_args(["codex", *ours])
    args.codex_args = passed_on
    return args


def _add_wish_arguments(parser: argparse.ArgumentParser, backend: bool = True) -> None:
    parser.add_argument(
        "--model", help=_("20b, 120b or a full model name (default: the planner's choice)")
    )
    parser.add_argument(
        "--context", type=int, help=_("context length in tokens (default: the largest that fits)")
    )
    parser.add_argument("--effort", choices=EFFORTS, help=_("reasoning effort (default: medium)"))
    if backend:
        parser.add_argument("--backend", choices=BACKENDS, help=_("engine (default: llamacpp)"))
    parser.add_argument(
        "--cpu-moe",
        type=int,
        metavar="N",
        help=_("keep the experts of the first N layers in system RAM"),
    )
    parser.add_argument(
        "--gpus", type=gpu_numbers, metavar="0,1",
        help=_("run on these GPUs (numbered as `doctor` lists them; the first takes the first "
            "layers, the last the output layer) or auto (default: the settings file's, else the "
            "planner's choice)"),
    )  # fmt: skip


def choose_language(argv: list[str]) -> list[str]:
    """Set the language of everything shown from `--lang LANG` (anywhere on the command line,
    taken out of it), else the settings file's `language`, else the environment's locale;
    returns the command line without `--lang`. Before the parser is built: its help is
    translated too."""
    rest, chosen, taken = [], None, iter(argv)
    for word in taken:
        if word == "--lang":
            chosen = next(taken, None)
        elif word.startswith("--lang="):
            chosen = word.partition("=")[2]
        else:
            rest.append(word)
    if chosen is None:
        try:
            chosen = config.load().language or None
        except UserError:  # the command reports a broken settings file itself
            chosen = None
    set_language(chosen)
    translate_argparse()
    return rest


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code."""
    words = choose_language(list(sys.argv[1:] if argv is None else argv))
    args = _parse(words)
    if args.command is None:
        build_parser().print_help()
        return 0
    from gptoss_local.paths import check_home

    module_name, _colon, function_name = HANDLERS[args.command].partition(":")
    handler = getattr(importlib.import_module(module_name), function_name)
    try:
        check_home()
        return int(handler(args))
    except UserError as exc:
        print(_("gptoss-local: error: {error}").format(error=exc), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(_("gptoss-local: interrupted"), file=sys.stderr)
        return 130
    except OSError as exc:  # a file or folder the commands did not expect to fail: no traceback
        where = f" ({exc.filename})" if exc.filename else ""
        error = f"{exc.strerror or exc}{where}"
        print(_("gptoss-local: error: {error}").format(error=error), file=sys.stderr)
        return 2
