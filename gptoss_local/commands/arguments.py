"""The options of every command, apart from their handlers: `cli.py` builds the whole parser
from this light module (`--help` stays fast) and imports a handler only when its command runs."""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path

from gptoss_local.commands.arg_types import (
    bounded_float,
    chat_id,
    non_negative_int,
    port_number,
    positive_int,
)
from gptoss_local.kinds import BACKENDS
from gptoss_local.serve.capacity import DEFAULT_CACHE_RAM_MIB, GPU_PARALLEL

LOCAL_BACKENDS = tuple(b for b in BACKENDS if b != "openai")  # what `serve` can load here


def model_source_arguments(parser: argparse.ArgumentParser, backends: tuple[str, ...]) -> None:
    """What to load and with which engine: the options `run`, `chat` and `serve` share."""
    parser.add_argument("--model-path", type=Path, metavar="FILE", help="any gpt-oss GGUF file")
    parser.add_argument(
        "--backend", choices=backends,
        help="engine (default: the settings file's, else llamacpp)",
    )  # fmt: skip
    parser.add_argument(
        "--cpu-sampling", action="store_true",
        help="pick tokens on the CPU even when the model runs on a GPU (default: on the GPU)",
    )  # fmt: skip


def run_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `run`."""
    parser.add_argument("prompt", nargs="?", help="the question (default: read from stdin)")
    model_source_arguments(parser, BACKENDS)
    client_arguments(parser)
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
    parser.add_argument(
        "--tools", type=Path, metavar="FILE",
        help="JSON list of function tools: offered; a call of one is printed and ends the run",
    )  # fmt: skip
    parser.add_argument(
        "--allow-tool", action="append", default=[], metavar="NAME",
        help="offer this tool and run its calls without asking: python, an MCP tool as "
        "`gptoss-local tools` lists it, or a pattern such as 'git__*' (repeatable)",
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


def client_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of the OpenAI-compatible client (`--backend openai`) on `run` and `chat`."""
    parser.add_argument(
        "--base-url", metavar="URL",
        help="with --backend openai: the server's address, e.g. http://192.168.1.20:8080/v1 "
        "(default: $OPENAI_BASE_URL)",
    )  # fmt: skip
    parser.add_argument(
        "--server-key", dest="api_key", metavar="KEY",
        help="with --backend openai: the key sent to that server (default: $OPENAI_API_KEY)",
    )  # fmt: skip
    # --server-key's old name, kept working; unlisted, as on `serve` --api-key is the key
    # clients must present.
    parser.add_argument("--api-key", dest="api_key", help=argparse.SUPPRESS)
    parser.add_argument(
        "--allow-http", action="store_true",
        help="with --backend openai: allow plain http:// beyond this PC and its local network",
    )  # fmt: skip


def serve_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `serve` beyond the shared model wishes."""
    model_source_arguments(parser, LOCAL_BACKENDS)
    parser.add_argument(
        "--host", default="127.0.0.1",
        help="address to listen on (default 127.0.0.1; any other needs --api-key)",
    )  # fmt: skip
    parser.add_argument("--port", type=port_number, default=8080, help="default 8080")
    parser.add_argument(
        "--api-key", metavar="KEY",
        help="key clients must send as `Authorization: Bearer KEY` (default: "
        "$GPTOSS_LOCAL_API_KEY; none on loopback)",
    )  # fmt: skip
    parser.add_argument(
        "--cors", action="append", default=[], metavar="ORIGIN",
        help="let web pages from ORIGIN (e.g. http://localhost:3000, or *) read replies; "
        "repeatable (default: none)",
    )  # fmt: skip
    parser.add_argument(
        "--allowed-host", action="append", default=[], metavar="NAME",
        help="also accept requests addressed to NAME (a proxy's or LAN name); repeatable",
    )  # fmt: skip
    parser.add_argument(
        "--max-waiting", type=positive_int, default=64, metavar="N",
        help="requests that may wait while one runs; more are refused with 503 (default 64)",
    )  # fmt: skip
    parser.add_argument(
        "--parallel", type=positive_int, metavar="N",
        help="replies decoded together, sharing the context (llama.cpp engine; default: "
        f"{GPU_PARALLEL} when the model runs on a GPU, 1 on a CPU, where more are no faster)",
    )  # fmt: skip
    parser.add_argument(
        "--cache-ram", type=non_negative_int, metavar="MIB",
        help="RAM for the caches of conversations waiting for their next turn, so that each "
        "reuses its own history (llama.cpp engine; default: a quarter of the free RAM, at most "
        f"{DEFAULT_CACHE_RAM_MIB}; 0: none)",
    )  # fmt: skip


def bench_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `bench`."""
    parser.add_argument("--model-path", type=Path, metavar="FILE",
                        help="any gpt-oss GGUF file (default: the planned model)")  # fmt: skip
    parser.add_argument("--prompt-tokens", type=int, default=512, metavar="N", help="default 512")
    parser.add_argument("--generate", type=int, default=128, metavar="N", help="default 128")
    parser.add_argument("--repeats", type=int, default=3, metavar="N", help="default 3")
    parser.add_argument("--json", action="store_true", help="print one JSON document")


def chat_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `chat` beyond the shared model wishes."""
    parser.add_argument(
        "--chat", type=chat_id, metavar="ID", help="reopen a saved chat (see `chats`)"
    )
    model_source_arguments(parser, BACKENDS)
    client_arguments(parser)


def chats_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `chats` and its subcommands `list` (the default) and `export`."""
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--search", metavar="TEXT", help="only chats whose title or text has TEXT")
    actions = parser.add_subparsers(dest="chats_command", metavar="{list,export}")
    listing = actions.add_parser("list", help="list the saved chats (the default)")
    # SUPPRESS: without it the subcommand's defaults would overwrite `chats --json`.
    listing.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="print one JSON document"
    )
    listing.add_argument("--search", metavar="TEXT", default=argparse.SUPPRESS, help="filter")
    export = actions.add_parser(
        "export",
        help="write one chat as Markdown or JSON",
        description="Write a chat with every message, its reasoning and its stats.",
    )
    export.add_argument("id", type=chat_id, help="the chat's id (see `gptoss-local chats`)")
    export.add_argument("--format", choices=("md", "json"), default="md", help="default: md")
    export.add_argument("--output", "-o", type=Path, metavar="FILE", help="default: stdout")


def pull_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `pull`."""
    parser.add_argument(
        "model", nargs="?", help="20b, 120b or a full model name (default: the planner's choice)"
    )
    parser.add_argument(
        "--source", metavar="NAME", help="download only from this source of the manifest"
    )
    parser.add_argument(
        "--offline", action="store_true", help="no network: only use files already on this PC"
    )
    parser.add_argument(
        "--no-reuse", action="store_true", help="do not look for copies in other tools' caches"
    )
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress and no notices")
    parser.add_argument(
        "--backend", choices=BACKENDS,
        help="llamacpp: into the models folder (default); ollama: into Ollama's own store",
    )  # fmt: skip


def models_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `models`."""
    parser.add_argument("--json", action="store_true", help="print one JSON document")


def verify_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `verify`."""
    parser.add_argument("model", nargs="?", help="20b, 120b or a full name (default: every model)")
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress bar")


def rm_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `rm`."""
    parser.add_argument("model", help="20b, 120b or a full model name")
    parser.add_argument("--yes", "-y", action="store_true", help="delete without asking")


def import_model_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `import`."""
    parser.add_argument("path", type=Path, help="the downloaded .gguf file (or one shard)")
    parser.add_argument(
        "--move", action="store_true", help="move the file instead of linking or copying it"
    )
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress bar")


def tools_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `tools` and its subcommands `list` (the default) and `call`."""
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    actions = parser.add_subparsers(dest="tools_command", metavar="{list,call}")
    listing = actions.add_parser("list", help="list every tool (the default)")
    # SUPPRESS: without it the subcommand's default would overwrite `tools --json`.
    listing.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="print one JSON document"
    )
    call = actions.add_parser(
        "call",
        help="call one tool directly, to check a set-up",
        description="Call a tool with JSON arguments and print its result, e.g. "
        """`gptoss-local tools call python '{"code": "print(6*7)"}'`.""",
    )
    call.add_argument("name", help="the tool's name as `gptoss-local tools` lists it")
    call.add_argument(
        "arguments", nargs="?", default="{}", metavar="JSON",
        help="the arguments as a JSON object (default: {})",
    )  # fmt: skip
    call.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS,
        help="print the result as one JSON object",
    )  # fmt: skip


def engine_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `engine` and its subcommand `install`."""
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    actions = parser.add_subparsers(dest="engine_command", metavar="{install}")
    install = actions.add_parser(
        "install",
        help="rebuild llama-cpp-python for this PC's NVIDIA GPU (--cuda)",
        description="Rebuild llama-cpp-python inside gptoss-local's own environment with CUDA, "
        "for the detected GPU's architecture only. Without a CUDA toolkit on the PC, NVIDIA's "
        "pip packages (CUDA 13) serve as one. Needs a C++ compiler (MSVC on Windows).",
    )
    install.add_argument("--cuda", action="store_true", help="build with CUDA (required)")
    install.add_argument(
        "--arch", metavar="N",
        help="compute capability to build for, e.g. 89 or 8.9 (default: the GPUs found)",
    )  # fmt: skip
    install.add_argument(
        "--toolkit", choices=("auto", "system", "pip"), default="auto",
        help="CUDA toolkit: the one installed (system), NVIDIA's pip packages (pip), or the "
        "installed one when it can build for the GPU, else pip's (auto, the default)",
    )  # fmt: skip
    install.add_argument(
        "--python", metavar="PATH",
        help="the interpreter whose environment to rebuild (default: gptoss-local's own)",
    )  # fmt: skip
    install.add_argument("--dry-run", action="store_true", help="print the plan, change nothing")
    install.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS,
        help="with --dry-run: the plan as one JSON document",
    )  # fmt: skip
