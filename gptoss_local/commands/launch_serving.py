"""The server an agent of `gptoss-local launch` talks to: the machine's engine (the serve its
runtime file names, `find_engine`), or a `gptoss-local serve` answering on the port
(`find_server`, the one place that looks for either), else the planned model loaded here and
served on loopback for as long as the agent runs (`serving`)."""

from __future__ import annotations

import argparse
import json
import logging
import os
import socket
import threading
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from gptoss_local import config, paths
from gptoss_local.agents.agent import Agent, Served
from gptoss_local.commands.notes import LoadNotes, note, warn
from gptoss_local.commands.serve import listen, model_aliases
from gptoss_local.errors import WishError
from gptoss_local.i18n import _
from gptoss_local.launch.engine_switch import ask_on_terminal, switch_body, switch_engine
from gptoss_local.launch.engines import engine
from gptoss_local.launch.prepare import prepare
from gptoss_local.launch.resident import OtherModel
from gptoss_local.plan.text import min_context_line
from gptoss_local.plan.wishes import Wishes, wishes_from
from gptoss_local.serve.find_engine import Engine, find_engine
from gptoss_local.serve.guard import Guard
from gptoss_local.serve.model_names import accepts
from gptoss_local.serve.service import Service

KEY_VARIABLE = "GPTOSS_LOCAL_API_KEY"
PROBE_SECONDS = 2.0
ENGINE_WAIT_SECONDS = 60.0  # an engine that is still loading its model is waited for
Check = Callable[[Engine], Engine]


def find_server(port: int, check: Check | None = None) -> Served | None:
    """The machine's engine (passed through `check`: the model asked for), else a
    gptoss-local server already answering on 127.0.0.1:`port`, or None. The engine's key, if
    any, is put in `KEY_VARIABLE` for the agent (a runtime file that cannot be trusted is
    refused: `EngineFileError`)."""
    found = find_engine(wait=ENGINE_WAIT_SECONDS)
    if found is not None and not found.starting:
        found = check(found) if check is not None else found
        if found.record.key:
            os.environ[KEY_VARIABLE] = found.record.key
        context = found.state.get("context")
        if isinstance(context, int):
            key = KEY_VARIABLE if found.record.key else None
            return Served(found.url, found.names[0], context, key_variable=key)
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


def model_check(args: argparse.Namespace, agent: Agent) -> Check:
    """The engine as the agent may use it: as it is when no model was asked for (--model,
    --model-path), else holding that model: switched to it when the user says so (asked on a
    terminal, or --switch), else refused (`OtherModel`) rather than load a second copy."""

    def check(found: Engine) -> Engine:
        if args.model is None and args.model_path is None:
            return found
        settings = config.load()
        ready = prepare(_local_wishes(args, agent, settings), settings, warn=warn).ready
        assert ready is not None  # made ready: nothing is asked first
        if accepts(ready.model, found.names):
            return found
        if not ask_on_terminal(args.switch)(found, ready.model):
            raise OtherModel(found, ready.model, flag=True)
        note(_("switching the engine to {model}").format(model=ready.model))
        return switch_engine(found, switch_body(ready.model, ready.path))

    return check


def planned(args: argparse.Namespace, agent: Agent) -> Served:
    """What a server on --port would serve, planned without loading anything (`--config`
    with no server running)."""
    settings = config.load()
    wishes = _local_wishes(args, agent, settings)
    plan = prepare(wishes, settings, warn=warn, make_ready=False).plan
    if plan.model is None:
        raise WishError(_("no model to serve: choose one with --model or --model-path"))
    key = KEY_VARIABLE if os.environ.get(KEY_VARIABLE) else None
    return Served(f"http://127.0.0.1:{args.port}/v1", plan.model, plan.context,
                  args.effort or settings.effort, key_variable=key)  # fmt: skip


@contextmanager
def serving(args: argparse.Namespace, agent: Agent) -> Iterator[Served]:
    """The planned model loaded here and served on loopback until the block ends."""
    settings = config.load()
    prepared = prepare(_local_wishes(args, agent, settings), settings, warn=warn)
    ready = prepared.ready
    assert ready is not None  # made ready: nothing is asked first
    kept = min_context_line(agent.min_context)
    if kept in prepared.plan.reasons:
        note(kept)
    backend = ready.open(LoadNotes())
    try:
        names = (ready.model, *model_aliases(prepared.preparation.catalog, ready.model))
        service = Service(backend, names, ready.generation, max_waiting=8)
        server = listen(service, Guard("127.0.0.1", _free_or_any(args.port), None))
        log = _log_to_file(agent.name)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        context = service.limits.context
        note(_("serving {model} with a {context:,}-token context at {url} while {agent} runs "
               "(log: {log})").format(model=ready.model, context=context, url=server.url,
                                      agent=agent.title, log=log))  # fmt: skip
        try:
            yield Served(server.url, ready.model, context, args.effort or ready.generation.effort,
                         freeform_tools=backend.capabilities.freeform_tools)  # fmt: skip
        finally:
            server.stop()
            thread.join(timeout=10)
    finally:
        backend.close()


def _local_wishes(args: argparse.Namespace, agent: Agent, settings: config.Settings) -> Wishes:
    """The command line's wishes for a model run here, with room for the agent's context."""
    wishes = wishes_from(args, settings)
    if engine(wishes.backend).remote:
        raise WishError(_("launch runs the model on this PC: --backend llamacpp or ollama"))
    return replace(wishes, min_context=agent.min_context)


def _free_or_any(port: int) -> int:
    """`port` when nothing listens there, else 0 (any free port): the agent is told which."""
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return 0
    return port


def _log_to_file(name: str) -> Path:
    """The server's request log goes to a file: the terminal belongs to the agent."""
    path = paths.ensure_dir(paths.logs_dir()) / f"{name}-serve.log"
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%Y-%m-%d %H:%M:%S"))
    logger = logging.getLogger("gptoss_local.serve")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    return path
