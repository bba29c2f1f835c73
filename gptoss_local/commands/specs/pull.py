"""`gptoss-local pull`: a model downloaded, or a copy on this PC reused."""

from __future__ import annotations

import argparse

from gptoss_local.commands.specs.command import Command
from gptoss_local.i18n import N_, _
from gptoss_local.kinds import BACKENDS


def add_arguments(parser: argparse.ArgumentParser) -> None:
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


COMMAND = Command(
    name="pull",
    help=N_("download a model (resumable, verified), or reuse a copy already on this PC"),
    description=N_(
        "Download the model's files into the models folder, verified against "
        "the manifest's sha256; resumes after an interruption, retries, falls back to "
        "the next source, and reuses copies from the Hugging Face, llama.cpp or LM Studio "
        "caches."
    ),
    add_arguments=add_arguments,
    handler="gptoss_local.commands.pull:run_pull",
)
