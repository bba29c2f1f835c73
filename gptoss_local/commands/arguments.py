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
from gptoss_local.i18n import _
from gptoss_local.kinds import BACKENDS
from gptoss_local.serve.capacity import DEFAULT_CACHE_RAM_MIB, GPU_PARALLEL

LOCAL_BACKENDS = tuple(b for b in BACKENDS if b != "openai")  # what `serve` can load here


def model_source_arguments(parser: argparse.ArgumentParser, backends: tuple[str, ...]) -> None:
    """What to load and with which engine: the options `run`, `chat` and `serve` share."""
    parser.add_argument("--model-path", type=Path, metavar="FILE", help=_("any gpt-oss GGUF file"))
    parser.add_argument(
        "--backend", choices=backends,
        help=_("engine (default: the settings file's, else llamacpp)"),
    )  # fmt: skip
    parser.add_argument(
        "--cpu-sampling", action="store_true",
        help=_("pick tokens on the CPU even when the model runs on a GPU (default: on the GPU)"),
    )  # fmt: skip
    parser.add_argument(
        "--draft", choices=("ngram", "eagle3", "off"),
        help=_("speculative decoding with the llama.cpp engine: drafts of the next tokens "
            "that the model checks several at once; ngram takes them from the conversation's "
            "own text, eagle3 from an EAGLE-3 head (--draft-model); on only when the whole "
            "model is on the GPU (default: the settings file's, else off)"),
    )  # fmt: skip
    parser.add_argument(
        "--draft-model", type=Path, metavar="FILE",
        help=_("an EAGLE-3 draft head (GGUF) trained for the model; implies --draft eagle3"),
    )  # fmt: skip


def run_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `run`."""
    parser.add_argument("prompt", nargs="?", help=_("the question (default: read from stdin)"))
    model_source_arguments(parser, BACKENDS)
    client_arguments(parser)
    parser.add_argument("--instructions", help=_("instructions for the model (a system prompt)"))
    parser.add_argument(
        "--max-tokens", type=positive_int, metavar="N", help=_("stop after N generated tokens")
    )
    parser.add_argument("--seed", type=int, help=_("sampling seed, for repeatable output"))
    parser.add_argument(
        "--temperature", type=bounded_float(0.0, 100.0), default=1.0,
        help=_("default 1.0; 0 = greedy"),
    )  # fmt: skip
    parser.add_argument(
        "--top-p", type=bounded_float(0.0, 1.0, low_open=True), default=1.0,
        help=_("default 1.0 (off)"),
    )  # fmt: skip
    parser.add_argument(
        "--tools", type=Path, metavar="FILE",
        help=_("JSON list of function tools: offered; a call of one is printed and ends the run"),
    )  # fmt: skip
    parser.add_argument(
        "--allow-tool", action="append", default=[], metavar="NAME",
        help=_("offer this tool and run its calls without asking: python, an MCP tool as "
            "`gptoss-local tools` lists it, or a pattern such as 'git__*' (repeatable)"),
    )  # fmt: skip
    parser.add_argument(
        "--tool-choice", metavar="required|NAME",
        help=_("make the first reply call a tool: any offered one (required), or the one named "
            "(default: auto, the model decides)"),
    )  # fmt: skip
    parser.add_argument(
        "--file", action="append", default=[], type=Path, metavar="PATH", dest="files",
        help=_("attach a text or code file, a PDF (as its text) or a folder (its listing and "
            "files) after the prompt (repeatable)"),
    )  # fmt: skip
    parser.add_argument(
        "--schema", metavar="FILE|JSON",
        help=_("answer with JSON that this JSON schema accepts (a file, or the schema itself); "
            "exit 1 when the answer does not match"),
    )  # fmt: skip
    parser.add_argument(
        "--show-reasoning", action="store_true", help=_("print the reasoning to stderr")
    )
    parser.add_argument("--json", action="store_true", help=_("one JSON object per line on stdout"))
    parser.add_argument(
        "--print-prompt", action="store_true", help=_("print the exact Harmony prompt and exit")
    )
    parser.add_argument(
        "--date", type=dt.date.fromisoformat, metavar="YYYY-MM-DD", help=_("current date")
    )


def client_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of the OpenAI-compatible client (`--backend openai`) on `run` and `chat`."""
    parser.add_argument(
        "--base-url", metavar="URL",
        help=_("with --backend openai: the server's address, e.g. http://192.168.1.20:8080/v1 "
            "(default: $OPENAI_BASE_URL)"),
    )  # fmt: skip
    parser.add_argument(
        "--server-key", dest="api_key", metavar="KEY",
        help=_("with --backend openai: the key sent to that server (default: $OPENAI_API_KEY)"),
    )  # fmt: skip
    # --server-key's old name, kept working; unlisted, as on `serve` --api-key is the key
    # clients must present.
    parser.add_argument("--api-key", dest="api_key", help=argparse.SUPPRESS)
    parser.add_argument(
        "--allow-http", action="store_true",
        help=_("with --backend openai: allow plain http:// beyond this PC and its local network"),
    )  # fmt: skip


def serve_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `serve` beyond the shared model wishes."""
    model_source_arguments(parser, LOCAL_BACKENDS)
    parser.add_argument(
        "--host", default="127.0.0.1",
        help=_("address to listen on (default 127.0.0.1; any other needs --api-key)"),
    )  # fmt: skip
    parser.add_argument("--port", type=port_number, default=8080, help=_("default 8080"))
    parser.add_argument(
        "--api-key", metavar="KEY",
        help=_("key clients must send as `Authorization: Bearer KEY` (default: "
            "$GPTOSS_LOCAL_API_KEY; none on loopback)"),
    )  # fmt: skip
    parser.add_argument(
        "--cors", action="append", default=[], metavar="ORIGIN",
        help=_("let web pages from ORIGIN (e.g. http://localhost:3000, or *) read replies; "
            "repeatable (default: none)"),
    )  # fmt: skip
    parser.add_argument(
        "--allowed-host", action="append", default=[], metavar="NAME",
        help=_("also accept requests addressed to NAME (a proxy's or LAN name); repeatable"),
    )  # fmt: skip
    parser.add_argument(
        "--max-waiting", type=positive_int, default=64, metavar="N",
        help=_("requests that may wait while one runs; more are refused with 503 (default 64)"),
    )  # fmt: skip
    parser.add_argument(
        "--parallel", type=positive_int, metavar="N",
        help=_("replies decoded together, sharing the context (llama.cpp engine; default: "
            "{parallel} when the model runs on a GPU, 1 on a CPU, where more are no faster)"
        ).format(parallel=GPU_PARALLEL),
    )  # fmt: skip
    parser.add_argument(
        "--browser", action="store_true",
        help=_("offer the model the browser tool over the settings' docs folders, run by the "
            "server itself (off unless given: clients then read those files through the model)"),
    )  # fmt: skip
    parser.add_argument(
        "--cache-ram", type=non_negative_int, metavar="MIB",
        help=_("RAM for the caches of conversations waiting for their next turn, so that each "
            "reuses its own history (llama.cpp engine; default: a quarter of the free RAM, at most "
            "{mib}; 0: none)"
        ).format(mib=DEFAULT_CACHE_RAM_MIB),
    )  # fmt: skip


def codex_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `codex`; everything after them goes to Codex."""
    model_source_arguments(parser, LOCAL_BACKENDS)
    parser.add_argument(
        "--port", type=port_number, default=8080,
        help=_("use the gptoss-local serve on this port if one runs, else serve here while "
            "Codex runs (default 8080; another free port if it is taken)"),
    )  # fmt: skip
    parser.add_argument(
        "--new-server", action="store_true",
        help=_("load the model here even if a gptoss-local serve already runs"),
    )  # fmt: skip
    parser.add_argument(
        "--codex-path", type=Path, metavar="FILE",
        help=_("Codex CLI's program (default: `codex` on the PATH)"),
    )  # fmt: skip
    parser.add_argument(
        "codex_args", nargs="*", metavar="CODEX ARGS",
        help=_("everything after gptoss-local's own options goes to Codex as it is, e.g. "
            "--sandbox workspace-write or exec \"fix the failing test\""),
    )  # fmt: skip


def split_passed_on(
    parser: argparse.ArgumentParser, argv: list[str]
) -> tuple[list[str], list[str]]:
    """`argv` cut where `parser`'s own options end: the first word that is not one of them
    (or `--`) and everything after it belong to the program run (Codex's options and
    subcommands look like ours to argparse)."""
    takes_value = {
        flag: action.nargs != 0 for action in parser._actions for flag in action.option_strings
    }
    at = 0
    while at < len(argv):
        word = argv[at]
        flag = word.split("=", 1)[0]
        if word == "--" or flag not in takes_value:
            return argv[:at], argv[at + (word == "--") :]
        at += 1 + (takes_value[flag] and "=" not in word)
    return argv, []


def bench_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `bench`."""
    parser.add_argument("--model-path", type=Path, metavar="FILE",
                        help=_("any gpt-oss GGUF file (default: the planned model)"))  # fmt: skip
    parser.add_argument(
        "--prompt-tokens", type=int, default=512, metavar="N", help=_("default 512")
    )
    parser.add_argument("--generate", type=int, default=128, metavar="N", help=_("default 128"))
    parser.add_argument("--repeats", type=int, default=3, metavar="N", help=_("default 3"))
    parser.add_argument("--json", action="store_true", help=_("print one JSON document"))


def chat_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `chat` beyond the shared model wishes."""
    parser.add_argument(
        "--chat", type=chat_id, metavar="ID", help=_("reopen a saved chat (see `chats`)")
    )
    model_source_arguments(parser, BACKENDS)
    client_arguments(parser)


def chats_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `chats` and its subcommands `list` (the default) and `export`."""
    parser.add_argument("--json", action="store_true", help=_("print one JSON document"))
    parser.add_argument(
        "--search", metavar="TEXT", help=_("only chats whose title or text has TEXT")
    )
    actions = parser.add_subparsers(dest="chats_command", metavar="{list,export}")
    listing = actions.add_parser("list", help=_("list the saved chats (the default)"))
    # SUPPRESS: without it the subcommand's defaults would overwrite `chats --json`.
    listing.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help=_("print one JSON document")
    )
    listing.add_argument("--search", metavar="TEXT", default=argparse.SUPPRESS, help=_("filter"))
    export = actions.add_parser(
        "export",
        help=_("write one chat as Markdown or JSON"),
        description=_("Write a chat with every message, its reasoning and its stats."),
    )
    export.add_argument("id", type=chat_id, help=_("the chat's id (see `gptoss-local chats`)"))
    export.add_argument("--format", choices=("md", "json"), default="md", help=_("default: md"))
    export.add_argument("--output", "-o", type=Path, metavar="FILE", help=_("default: stdout"))


def pull_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `pull`."""
    parser.add_argument(
        "model", nargs="?", help=_("20b, 120b or a full model name (default: the planner's choice)")
    )
    parser.add_argument(
        "--source", metavar="NAME", help=_("download only from this source of the manifest")
    )
    parser.add_argument(
        "--offline", action="store_true", help=_("no network: only use files already on this PC")
    )
    parser.add_argument(
        "--no-reuse", action="store_true", help=_("do not look for copies in other tools' caches")
    )
    parser.add_argument("--quiet", "-q", action="store_true", help=_("no progress and no notices"))
    parser.add_argument(
        "--backend", choices=BACKENDS,
        help=_("llamacpp: into the models folder (default); ollama: into Ollama's own store"),
    )  # fmt: skip


def models_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `models`."""
    parser.add_argument("--json", action="store_true", help=_("print one JSON document"))


def verify_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `verify`."""
    parser.add_argument(
        "model", nargs="?", help=_("20b, 120b or a full name (default: every model)")
    )
    parser.add_argument("--quiet", "-q", action="store_true", help=_("no progress bar"))


def rm_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `rm`."""
    parser.add_argument("model", help=_("20b, 120b or a full model name"))
    parser.add_argument("--yes", "-y", action="store_true", help=_("delete without asking"))


def import_model_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `import`."""
    parser.add_argument("path", type=Path, help=_("the downloaded .gguf file (or one shard)"))
    parser.add_argument(
        "--move", action="store_true", help=_("move the file instead of linking or copying it")
    )
    parser.add_argument("--quiet", "-q", action="store_true", help=_("no progress bar"))


def tools_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `tools` and its subcommands `list` (the default) and `call`."""
    parser.add_argument("--json", action="store_true", help=_("print one JSON document"))
    actions = parser.add_subparsers(dest="tools_command", metavar="{list,call}")
    listing = actions.add_parser("list", help=_("list every tool (the default)"))
    # SUPPRESS: without it the subcommand's default would overwrite `tools --json`.
    listing.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help=_("print one JSON document")
    )
    call = actions.add_parser(
        "call",
        help=_("call one tool directly, to check a set-up"),
        description=_(
            "Call a tool with JSON arguments and print its result, e.g. {example}."
        ).format(example="""`gptoss-local tools call python '{"code": "print(6*7)"}'`"""),
    )
    call.add_argument("name", help=_("the tool's name as `gptoss-local tools` lists it"))
    call.add_argument(
        "arguments", nargs="?", default="{}", metavar="JSON",
        help=_("the arguments as a JSON object (default: {empty})").format(empty="{}"),
    )  # fmt: skip
    call.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS,
        help=_("print the result as one JSON object"),
    )  # fmt: skip


def docs_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `docs` and its subcommands `list` (the default), `add`, `rm`, `reindex`."""
    parser.add_argument("--json", action="store_true", help=_("print one JSON document"))
    actions = parser.add_subparsers(dest="docs_command", metavar="{list,add,rm,reindex}")
    listing = actions.add_parser("list", help=_("list the folders, their files and the index"))
    listing.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help=_("print one JSON document")
    )
    add = actions.add_parser(
        "add",
        help=_("let the browser search these folders (indexed now)"),
        description=_("Add folders to the browser's (settings' `docs`) and index their files."),
    )
    add.add_argument("paths", nargs="+", type=Path, metavar="PATH", help=_("a folder"))
    remove = actions.add_parser(
        "rm",
        help=_("stop searching a folder (its files leave the index)"),
        description=_("Remove a folder from the browser's, and its files from the index."),
    )
    remove.add_argument("path", type=Path, metavar="PATH", help=_("a folder the browser searches"))
    reindex = actions.add_parser(
        "reindex",
        help=_("bring the index up to date (only changed files are read again)"),
        description=_(
            "Walk the folders again: new and changed files are indexed, deleted ones leave "
            "the index; a file whose size and time are unchanged is not read."
        ),
    )
    reindex.add_argument(
        "--rebuild",
        action="store_true",
        help=_(
            "start the index anew and read every file again (a damaged index is kept beside "
            "it, renamed library.sqlite3.damaged-TIME)"
        ),
    )


def engine_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `engine` and its subcommand `install`."""
    parser.add_argument("--json", action="store_true", help=_("print one JSON document"))
    actions = parser.add_subparsers(dest="engine_command", metavar="{install}")
    install = actions.add_parser(
        "install",
        help=_("rebuild llama-cpp-python for this PC's NVIDIA GPU (--cuda)"),
        description=_(
            "Rebuild llama-cpp-python inside gptoss-local's own environment with CUDA, "
            "for the detected GPU's architecture only. Without a CUDA toolkit on the PC, NVIDIA's "
            "pip packages (CUDA 13) serve as one. Needs a C++ compiler (MSVC on Windows)."
        ),
    )
    install.add_argument("--cuda", action="store_true", help=_("build with CUDA (required)"))
    install.add_argument(
        "--arch", metavar="N",
        help=_("compute capability to build for, e.g. 89 or 8.9 (default: the GPUs found)"),
    )  # fmt: skip
    install.add_argument(
        "--toolkit", choices=("auto", "system", "pip"), default="auto",
        help=_("CUDA toolkit: the one installed (system), NVIDIA's pip packages (pip), or the "
            "installed one when it can build for the GPU, else pip's (auto, the default)"),
    )  # fmt: skip
    install.add_argument(
        "--python", metavar="PATH",
        help=_("the interpreter whose environment to rebuild (default: gptoss-local's own)"),
    )  # fmt: skip
    install.add_argument("--dry-run", action="store_true", help=_("print the plan, change nothing"))
    install.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS,
        help=_("with --dry-run: the plan as one JSON document"),
    )  # fmt: skip
