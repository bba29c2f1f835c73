"""Starting the machine's engine in the background (the `engine_start = "background"`
setting): the first command that needs the model runs `gptoss-local serve` detached, on a free
loopback port with a fresh key, and waits until the runtime file names it; the next commands
find it there. Its stderr goes to `engine.log` in the logs folder.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from gptoss_local import paths
from gptoss_local.errors import WishError
from gptoss_local.i18n import _
from gptoss_local.launch.engines import Ready
from gptoss_local.plan.wishes import Wishes
from gptoss_local.serve.find_engine import Engine, find_engine

START_SECONDS = 600.0  # the largest model loads in minutes from a slow disk
POLL_SECONDS = 0.2
LOG_NAME = "engine.log"


def serve_command(ready: Ready, wishes: Wishes) -> list[str]:
    """The `serve` that holds the model `ready` names, as the command line asked for it."""
    command = [sys.executable, "-m", "gptoss_local", "serve", "--host", "127.0.0.1",
               "--port", "0", "--backend", wishes.backend]  # fmt: skip
    if wishes.model_path is not None:
        command += ["--model-path", str(wishes.model_path)]
    else:
        command += ["--model", ready.model]
    if "context" in wishes.given and wishes.context:
        command += ["--context", str(wishes.context)]
    return command


def start_engine(
    ready: Ready, wishes: Wishes, notice: Callable[[str], None], wait: float = START_SECONDS
) -> Engine:
    """Start the engine in the background and return it once it serves (or the engine another
    program started at the same moment, which the runtime file names instead).

    Raises:
        WishError: it ended before it served (the log's last lines named), or took too long.
    """
    log_path = paths.ensure_dir(paths.logs_dir()) / LOG_NAME
    notice(_("starting the engine in the background (its log: {path})").format(path=log_path))
    # The key travels in the environment, which other users cannot read (a command line can).
    env = {**os.environ, "GPTOSS_LOCAL_API_KEY": secrets.token_urlsafe(24)}
    with log_path.open("ab") as log:
        process = subprocess.Popen(serve_command(ready, wishes), stdin=subprocess.DEVNULL,
                                   stdout=log, stderr=log, env=env, **_detached())  # fmt: skip
    deadline = time.monotonic() + wait
    while True:
        found = find_engine()
        if found is not None and not found.starting:
            return found
        if found is None and process.poll() is not None:
            raise _not_started(process.returncode, log_path)
        if time.monotonic() > deadline:
            raise WishError(_("the engine did not start within {seconds:.0f} s").format(
                seconds=wait), _("See {path}.").format(path=log_path))  # fmt: skip
        time.sleep(POLL_SECONDS)  # polls the runtime file while the engine loads


def _detached() -> dict[str, Any]:
    """How the engine outlives this command and its terminal's Ctrl-C."""
    if os.name == "nt":
        flags = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)
        return {"creationflags": flags | getattr(subprocess, "DETACHED_PROCESS", 0)}
    return {"start_new_session": True}


def _not_started(code: int, log_path: os.PathLike[str]) -> WishError:
    try:
        with open(log_path, encoding="utf-8", errors="replace") as log:
            tail = "".join(log.readlines()[-5:]).strip()
    except OSError:
        tail = ""
    return WishError(
        _("the engine started in the background ended (exit {code}) before it served").format(
            code=code) + (f":\n{tail}" if tail else ""),
        _("See {path}, or set engine_start = \"off\" to load the model in each command."
          ).format(path=log_path),
    )  # fmt: skip
