"""The option groups several commands share: the model wishes, what to load with which engine,
and the OpenAI-compatible client's options."""

from __future__ import annotations

import argparse
from pathlib import Path

from gptoss_local.commands.arg_types import gpu_numbers
from gptoss_local.i18n import _
from gptoss_local.kinds import BACKENDS, EFFORTS

LOCAL_BACKENDS = tuple(b for b in BACKENDS if b != "openai")  # what `serve` can load here


def wish_arguments(parser: argparse.ArgumentParser, backend: bool = True) -> None:
    """What the planner is asked for: model, context, effort, engine, experts in RAM, GPUs
    (`backend=False`: the command declares its own --backend)."""
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


def model_arguments(parser: argparse.ArgumentParser, backends: tuple[str, ...]) -> None:
    """The wishes and what to load with which engine (one of `backends`): the options of the
    commands that load a model to talk to (`run`, `serve`, `codex`)."""
    wish_arguments(parser, backend=False)  # model_source_arguments adds its own --backend
    model_source_arguments(parser, backends)


def model_source_arguments(parser: argparse.ArgumentParser, backends: tuple[str, ...]) -> None:
    """What to load and with which engine: the options `run`, `chat`, `serve` and `codex`
    share."""
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


def json_argument(
    parser: argparse.ArgumentParser, on_subcommand: bool = False, text: str | None = None
) -> None:
    """`--json`: print one JSON document (or what `text` says). On a subcommand
    (`on_subcommand`) it has no default, so that the subcommand's does not overwrite the
    command's own (`tools --json list`)."""
    parser.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS if on_subcommand else False,
        help=text or _("print one JSON document"),
    )  # fmt: skip


def listing_subcommands(
    parser: argparse.ArgumentParser, dest: str, metavar: str, listing_help: str
) -> argparse._SubParsersAction:
    """`--json` and the subcommands of a command whose default is `list` (`docs`, `tools`,
    `chats`): the subcommand's name goes into `dest` (None for the bare command), and `list`
    takes `--json` too. Returns the subcommands, to add the others to (`list`'s parser is
    `.choices["list"]`)."""
    json_argument(parser)
    actions = parser.add_subparsers(dest=dest, metavar=metavar)
    listing = actions.add_parser("list", help=listing_help)
    json_argument(listing, on_subcommand=True)
    return actions


def quiet_argument(parser: argparse.ArgumentParser) -> None:
    """`--quiet`, `-q`: no progress bar."""
    parser.add_argument("--quiet", "-q", action="store_true", help=_("no progress bar"))


def switch_argument(parser: argparse.ArgumentParser) -> None:
    """--switch: when the machine's engine holds another model, switch it without asking."""
    parser.add_argument(
        "--switch", action="store_true",
        help=_("when the machine's engine holds another model, switch it to this one without "
            "asking (the programs using it then talk to this model)"),
    )  # fmt: skip
