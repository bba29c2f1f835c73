"""`gptoss-local engine`: what llama.cpp is built with; `engine install --cuda` rebuilds it."""

from __future__ import annotations

import argparse

from gptoss_local.commands.specs.command import Command
from gptoss_local.commands.specs.shared import json_argument
from gptoss_local.i18n import N_, _


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `engine` and its subcommand `install`."""
    json_argument(parser)
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
    json_argument(install, True, _("with --dry-run: the plan as one JSON document"))


COMMAND = Command(
    name="engine",
    help=N_(
        "show what the llama.cpp engine is built with; `engine install --cuda` "
        "rebuilds it for the GPU"
    ),
    description=N_(
        "Show the installed llama-cpp-python: version, GPU offload, backends, "
        "CUDA architectures and runtime. `engine install --cuda` rebuilds it for this PC's "
        "GPU."
    ),
    add_arguments=add_arguments,
    handler="gptoss_local.commands.engine:run_engine",
)
