"""`gptoss-local chat`: the interactive chat TUI.

The first run (and any run whose model is not downloaded) opens on the first-run screen; later
runs load the remembered model straight away. Loading happens inside the app, with progress.
Mistakes that need no model — an unknown chat id, a bad --model-path file, an unknown
--model — are plain errors on the terminal (exit 2 through the CLI) before the app starts, and so
is a damaged history. If the history fails while the app runs, the app shows it and keeps the
text being sent in the input box; at exit the error is printed again, that text is saved to a
file, and the exit code is 2.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
from pathlib import Path

from gptoss_local import config, paths
from gptoss_local.chat.tool_host import ChatTools
from gptoss_local.i18n import _
from gptoss_local.launch.engine_link import EngineLink, Offer
from gptoss_local.launch.engines import Ready
from gptoss_local.launch.prepare import prepare
from gptoss_local.plan.wishes import Wishes, wishes_from
from gptoss_local.session.history import History


def run_chat(args: argparse.Namespace) -> int:
    """Set up (asking only what is open), then chat until the user quits."""

    settings = config.load()
    wishes = wishes_from(args, settings)
    with History() as history:
        if args.chat is not None:
            history.get_chat(args.chat)  # an unknown id is a plain error, before the app
        # Ready unless the first-run screen asks first; the app shows the warnings. Reads
        # --model-path's header: a bad file fails here, before the app.
        prepared = prepare(wishes, settings, ask_first=True)
        engine = link(wishes, settings)
        # The machine's engine, if it has the model (a refusal: before the app); with another
        # model there, the app offers to switch it (`offer`).
        found = engine.through(prepared.ready) if prepared.ready is not None else None
        offer = found if isinstance(found, Offer) else None
        ready = found.ready if isinstance(found, Offer) else found
        engine.notice = _quiet  # the app is on the terminal from here
        from gptoss_local.tui.app import make_app  # textual: imported only for this command

        tools = ChatTools.from_settings(settings)  # started by the app, on a worker
        app = make_app(history, ready=ready, setup=prepared.preparation,
                       chat_id=args.chat, tools=tools, engine=engine,
                       offer=offer.question if offer is not None else None,
                       context_policy=settings.context_policy)  # fmt: skip  # setup: for F9
        try:
            app.run()
        finally:
            app.close_backend()
        if offer is not None and app.declined_switch:
            raise offer.refusal  # nothing was loaded: what the engine holds, what to do
        if app.history_error is not None:  # before closing the history, which may fail too
            return _report_history_failure(app.history_error, app.unsent_text())
    return 0


def shared(ready: Ready | None, wishes: Wishes, settings: config.Settings) -> Ready | None:
    """`ready`, opening the machine's engine instead when it holds the model (one copy for
    every chat); another model there is refused with what to do (`over_engine`). Each chat is
    its own client of the engine, so that the engine's queue tells chats apart."""
    if ready is None:  # the first-run screen chooses: it loads here
        return None
    found = link(wishes, settings).through(ready)
    if isinstance(found, Offer):
        raise found.refusal
    return found


def link(wishes: Wishes, settings: config.Settings) -> EngineLink:
    """How this chat reaches the machine's engine (`EngineLink`)."""
    return EngineLink(wishes, settings.engine_start == "background", chat_client(), _say)


def chat_client() -> str:
    """This chat as the engine shows it (`ps`, and another chat's waiting notice)."""
    return f"gptoss-local chat {os.getpid()}"


def _say(text: str) -> None:
    print(text, file=sys.stderr)


def _quiet(_text: str) -> None:
    """Hears nothing: the app is on the terminal."""


def _report_history_failure(error: Exception, unsent: str) -> int:
    """Say again why the history failed, and keep the text the user could not send; exit 2."""
    print(_("gptoss-local: error: {error}").format(error=error), file=sys.stderr)
    if unsent.strip():
        try:
            saved = _save_unsent(unsent)
        except OSError as exc:  # the text is still worth showing rather than losing
            print(_("gptoss-local: cannot save your unsent message ({error}); it was:\n{text}")
                  .format(error=exc, text=unsent), file=sys.stderr)  # fmt: skip
        else:
            print(_("gptoss-local: your unsent message is saved in {path}").format(path=saved),
                  file=sys.stderr)  # fmt: skip
    return 2


def _save_unsent(text: str) -> Path:
    # Private like the history (0600, created anew: O_EXCL never writes through an existing file).

    folder = paths.data_dir()
    paths.ensure_dir(folder, mode=0o700)
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    for attempt in range(100):
        path = folder / (f"unsent-{stamp}.txt" if attempt == 0 else f"unsent-{stamp}-{attempt}.txt")
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue
        with open(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        return path
    pattern = f"unsent-{stamp}-*.txt"
    raise FileExistsError(
        _("too many {pattern} files in {folder}").format(pattern=pattern, folder=folder)
    )
