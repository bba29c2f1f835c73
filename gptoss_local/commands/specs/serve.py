"""`gptoss-local serve`: the model behind the OpenAI, Anthropic and Ollama APIs."""

from __future__ import annotations

import argparse

from gptoss_local.commands.arg_types import (
    keep_alive,
    non_negative_int,
    port_number,
    positive_int,
)
from gptoss_local.commands.specs.command import Command
from gptoss_local.commands.specs.shared import (
    LOCAL_BACKENDS,
    model_arguments,
)
from gptoss_local.i18n import N_, _
from gptoss_local.serve.capacity import DEFAULT_CACHE_RAM_MIB, GPU_PARALLEL
from gptoss_local.serve.keep_alive import DEFAULT_KEEP_ALIVE
from gptoss_local.serve.ollama.port import OLLAMA_PORT


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `serve`."""
    model_arguments(parser, LOCAL_BACKENDS)
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
        "--ollama", action="store_true",
        help=_("also listen on 127.0.0.1:11434, Ollama's port, so that apps that only know "
            "Ollama use this model (left alone when Ollama or another program holds it)"),
    )  # fmt: skip
    parser.add_argument(
        "--ollama-port", type=port_number, default=OLLAMA_PORT, metavar="N",
        help=_("the port --ollama listens on (default {port})").format(port=OLLAMA_PORT),
    )  # fmt: skip
    _capacity_arguments(parser)
    _residency_arguments(parser)


def _residency_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--keep-alive", type=keep_alive, default=DEFAULT_KEEP_ALIVE, metavar="DURATION",
        help=_("how long the model stays loaded with no request (default 5m; 0: unload after "
            "each reply; -1 or forever: never); the next request loads it again"),
    )  # fmt: skip
    parser.add_argument(
        "--unshared", action="store_true",
        help=_("not this machine's engine: other commands do not find it, and it may run "
            "beside the engine (a second model on purpose)"),
    )  # fmt: skip
    parser.add_argument(
        "--load", choices=("now", "on-demand"), default="now",
        help=_("now (default): the model is loaded when serve says it serves; on-demand: it "
            "loads at the first request (as for a service started at login)"),
    )  # fmt: skip


def _capacity_arguments(parser: argparse.ArgumentParser) -> None:
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


COMMAND = Command(
    name="serve",
    help=N_(
        "serve the model to other programs through the OpenAI, Anthropic and Ollama APIs "
        "(loopback by default)"
    ),
    description=N_(
        "Serve the planned model (or --model-path) at http://HOST:PORT to other programs, "
        "in the APIs they speak: OpenAI's (/v1/models, /v1/chat/completions, "
        "/v1/responses), Anthropic's Messages API (/v1/messages) and Ollama's (/api/chat, "
        "/api/generate, /api/tags, ...), streamed or not, reasoning apart from the answer, "
        "tools. It is the machine's one engine: `gptoss-local run` uses it rather than "
        "loading a copy of its own; it loads the model when needed and lets it go after "
        "--keep-alive. Listens on "
        "127.0.0.1 unless told otherwise; any other address needs --api-key."
    ),
    add_arguments=add_arguments,
    handler="gptoss_local.commands.serve:run_serve",
)
