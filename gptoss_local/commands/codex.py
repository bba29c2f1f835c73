"""`gptoss-local codex [CODEX ARGS...]`: OpenAI's Codex CLI on the local model, in one step.

It finds a `gptoss-local serve` already listening on this PC's --port and uses it; else it loads
the planned model itself (with at least `CODEX_CONTEXT` tokens of context where memory allows)
and serves it on loopback for as long as Codex runs. It then writes Codex a profile of its own
(`codex_profile`) and runs `codex --profile gptoss-local CODEX ARGS...`, exiting with Codex's
status. While Codex runs the terminal is Codex's: the server logs to a file, and Ctrl-C goes
to Codex.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from gptoss_local import config, paths
from gptoss_local.commands.codex_profile import PROFILE, Served, codex_home, write_profile
from gptoss_local.commands.notes import LoadNotes, note, warn
from gptoss_local.commands.serve import listen, model_aliases
from gptoss_local.errors import WishError
from gptoss_local.i18n import _
from gptoss_local.launch.engines import engine
from gptoss_local.launch.prepare import prepare
from gptoss_local.plan.text import min_context_line
from gptoss_local.plan.wishes import wishes_from
from gptoss_local.serve.guard import Guard
from gptoss_local.serve.service import Service

CODEX_CONTEXT = 32_768  # Codex's instructions, tools and command outputs need room
INSTALL_HINT = "npm i -g @openai/codex"
KEY_VARIABLE = "GPTOSS_LOCAL_API_KEY"
PROBE_SECONDS = 2.0


def run_codex(args: argparse.Namespace) -> int:
    """Run Codex against a local server; Codex's exit status."""
    codex = _codex_program(args.codex_path)
    arguments = list(args.codex_args or ())
    running = None if args.new_server else find_server(args.port)
    if running is not None:
        note(_("using the gptoss-local server at {url}").format(url=running.url))
        return _run(codex, replace(running, effort=args.effort or running.effort), arguments)
    with serving(args) as served:
        return _run(codex, served, arguments)


def _codex_program(given: Path | None) -> str:
    """Codex's executable: --codex-path, else `codex` on the PATH."""
    found = str(given) if given else shutil.which("codex")
    if not found or not os.access(found, os.X_OK):
        raise WishError(
            _("Codex CLI is not installed (no `codex` program found)."),
            _("Install it with `{command}` (it needs Node.js 18 or newer), or give its path "
              "with --codex-path.").format(command=INSTALL_HINT),
        )  # fmt: skip
    return found


def find_server(port: int) -> Served | None:
    """A gptoss-local server already answering on 127.0.0.1:`port`, or None."""
    url = f"http://127.0.0.1:{port}/v1"
    request = urllib.request.Request(f"{url}/models")
    key = os.environ.get(KEY_VARIABLE)
    if key:
        request.add_header("Authorization", f"Bearer {key}")
    try:
        with urllib.request.urlopen(request, timeout=PROBE_SECONDS) as answer:
            listed = json.loads(answer.read())
    except (OSError, ValueError):  # nothing there, another kind of server, or no JSON
        return None
    models = listed.get("data") if isinstance(listed, dict) else None
    ours = [m for m in models or () if isinstance(m, dict) and m.get("owned_by") == "gptoss-local"]
    if not ours or not isinstance(ours[0].get("max_model_len"), int):
        return None
    return Served(url, str(ours[0]["id"]), ours[0]["max_model_len"],
                  key_variable=KEY_VARIABLE if key else None)  # fmt: skip


@contextmanager
def serving(args: argparse.Namespace) -> Iterator[Served]:
    """The planned model loaded here and served on loopback until the block ends."""
    settings = config.load()
    wishes = wishes_from(args, settings)
    if engine(wishes.backend).remote:
        raise WishError(_("codex runs the model on this PC: --backend llamacpp or ollama"))
    wishes = replace(wishes, min_context=CODEX_CONTEXT)
    prepared = prepare(wishes, settings, warn=warn)
    ready = prepared.ready
    assert ready is not None  # made ready: nothing is asked first
    kept = min_context_line(CODEX_CONTEXT)
    if kept in prepared.plan.reasons:
        note(kept)
    backend = ready.open(LoadNotes())
    try:
        names = (ready.model, *model_aliases(prepared.preparation.catalog, ready.model))
        service = Service(backend, names, ready.generation, max_waiting=8)
        server = listen(service, Guard("127.0.0.1", _free_or_any(args.port), None))
        log = _log_to_file()
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        context = service.limits.context
        note(_("serving {model} with a {context:,}-token context at {url} while Codex runs "
               "(log: {log})").format(model=ready.model, context=context, url=server.url,
                                      log=log))  # fmt: skip
        try:
            yield Served(server.url, ready.model, context, args.effort or ready.generation.effort,
                         freeform_tools=backend.capabilities.freeform_tools)  # fmt: skip
        finally:
            server.stop()
            thread.join(timeout=10)
    finally:
        backend.close()


def _run(codex: str, served: Served, arguments: list[str]) -> int:
    """Write the profile and run Codex in the foreground; its exit status."""
    try:
        written = write_profile(served)
    except OSError as exc:
        raise WishError(_("cannot write Codex's profile into {folder}: {error}").format(
            folder=codex_home(), error=exc.strerror or exc)) from None  # fmt: skip
    if written.backup is not None:
        note(_("{path} was not written by gptoss-local: your file is kept as {backup}, and "
               "gptoss-local's profile takes its place. To use yours with Codex, rename the "
               "copy to NAME.config.toml and run `codex --profile NAME`.").format(
                   path=written.path, backup=written.backup))  # fmt: skip
    command = [codex, "--profile", PROFILE, *arguments]
    # Ctrl-C is Codex's (it stops the turn); this process waits, then stops the server.
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        return subprocess.call(command)
    except OSError as exc:
        raise WishError(_("cannot start Codex ({program}): {error}").format(
            program=codex, error=exc.strerror or exc)) from None  # fmt: skip
    finally:
        signal.signal(signal.SIGINT, previous)


def _free_or_any(port: int) -> int:
    """`port` when nothing listens there, else 0 (any free port): Codex is told which."""
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return 0
    return port


def _log_to_file() -> Path:
    """The server's request log goes to a file: the terminal belongs to Codex."""
    path = paths.ensure_dir(paths.logs_dir()) / "codex-serve.log"
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%Y-%m-%d %H:%M:%S"))
    logger = logging.getLogger("gptoss_local.serve")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    return path
