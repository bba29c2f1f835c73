"""`gptoss-local chat`: the interactive chat TUI.

The first run (and any run whose model is not downloaded) opens on the first-run screen; later
runs load the remembered model straight away. Loading happens inside the app, with progress.
Mistakes that need no model — an unknown chat id, a bad --model-path file, an unknown
--model — are plain errors on the terminal (exit 2 through the CLI) before the app starts.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `chat` beyond the shared model wishes."""
    parser.add_argument("--model-path", type=Path, metavar="FILE", help="any gpt-oss GGUF file")
    parser.add_argument("--chat", type=int, metavar="ID", help="reopen a saved chat (see `chats`)")
    parser.add_argument(
        "--backend", choices=("llamacpp", "ollama"),
        help="engine (default: the settings file's, else llamacpp)",
    )  # fmt: skip
    parser.add_argument(
        "--cpu-sampling", action="store_true",
        help="pick tokens on the CPU even when the model runs on a GPU (default: on the GPU)",
    )  # fmt: skip


def run_chat(args: argparse.Namespace) -> int:
    """Set up (asking only what is open), then chat until the user quits."""
    from gptoss_local.errors import WishError
    from gptoss_local.first_run import Setup
    from gptoss_local.session.history import History

    if args.model_path is not None and args.backend == "ollama":
        raise WishError("--model-path works with the llama.cpp backend only (--backend llamacpp)")
    with History() as history:
        if args.chat is not None:
            history.get_chat(args.chat)  # an unknown id is a plain error, before the app
        setup = Setup.probe(args)  # reads --model-path's header: a bad file fails here
        ready = None
        if not setup.needs_screen():
            choices = setup.initial()
            ready = setup.ready(choices, setup.plan(choices))
        from gptoss_local.tui.app import make_app  # textual: imported only for this command

        app = make_app(history, ready=ready, setup=setup, chat_id=args.chat)  # setup: for F9
        try:
            app.run()
        finally:
            app.close_backend()
    return 0
