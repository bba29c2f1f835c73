"""The `gptoss-local` command line: parse, call one service, print.

Heavy modules (llama_cpp, textual, pynvml, psutil) are imported inside the commands that need them,
so `gptoss-local --help` costs little more than starting Python.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from gptoss_local import __version__

EFFORTS = ("low", "medium", "high")
BACKENDS = ("llamacpp", "ollama")
# Each command's handler as "module:function", imported only when that command runs.
HANDLERS = {
    "doctor": "gptoss_local.commands.doctor:run_doctor",
    "run": "gptoss_local.commands.run:run_run",
    "bench": "gptoss_local.commands.bench:run_bench",
}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every working command."""
    parser = argparse.ArgumentParser(
        prog="gptoss-local",
        description="Run OpenAI's gpt-oss models privately and offline on your NVIDIA RTX PC.",
    )
    parser.add_argument("--version", action="version", version=f"gptoss-local {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    doctor = commands.add_parser(
        "doctor",
        help="show the GPUs, memory and engine found, and which model would run and why",
        description="Show the GPUs, memory, disk and engine found, and the plan: which model, "
        "where its parts go, how much memory it takes, and why.",
    )
    doctor.add_argument(
        "--json", action="store_true", help="print one JSON document (see docs/doctor-json.md)"
    )
    _add_wish_arguments(doctor)
    run = commands.add_parser(
        "run",
        help="answer one prompt and exit (scriptable)",
        description="Answer one prompt with a local gpt-oss model: the answer goes to stdout, "
        "reasoning to stderr with --show-reasoning, or everything as JSON lines with --json.",
    )
    _add_wish_arguments(run, backend=False)  # the Ollama backend does not stream yet
    from gptoss_local.commands.run import add_arguments as add_run_arguments

    add_run_arguments(run)
    bench = commands.add_parser(
        "bench",
        help="measure prefill and decode speed of the planned model on this machine",
        description="Load the planned model (or --model-path) and measure prompt evaluation and "
        "generation speed with gpt-oss's sampling settings and greedy decoding; compares the "
        "result with the known-good range for your GPU when there is one.",
    )
    _add_wish_arguments(bench, backend=False)
    from gptoss_local.commands.bench import add_arguments as add_bench_arguments

    add_bench_arguments(bench)
    return parser


def _add_wish_arguments(parser: argparse.ArgumentParser, backend: bool = True) -> None:
    parser.add_argument(
        "--model", help="20b, 120b or a full model name (default: the planner's choice)"
    )
    parser.add_argument(
        "--context", type=int, help="context length in tokens (default: the largest that fits)"
    )
    parser.add_argument("--effort", choices=EFFORTS, help="reasoning effort (default: medium)")
    if backend:
        parser.add_argument("--backend", choices=BACKENDS, help="engine (default: llamacpp)")
    parser.add_argument(
        "--cpu-moe",
        type=int,
        metavar="N",
        help="keep the experts of the first N layers in system RAM",
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code."""
    args = build_parser().parse_args(argv)
    if args.command is None:
        build_parser().print_help()
        return 0
    from gptoss_local.errors import UserFacingError

    module_name, _, function_name = HANDLERS[args.command].partition(":")
    handler = getattr(importlib.import_module(module_name), function_name)
    try:
        return int(handler(args))
    except UserFacingError as exc:
        print(f"gptoss-local: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("gptoss-local: interrupted", file=sys.stderr)
        return 130
