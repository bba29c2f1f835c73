"""`gptoss-local serve`: load the planned model once and serve it through the OpenAI API and
Ollama's (`--ollama`: on Ollama's own port too, `serve_ollama`)."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
from dataclasses import replace
from functools import partial

from gptoss_local import config
from gptoss_local.commands.notes import LoadNotes, warn
from gptoss_local.commands.serve_ollama import ollama_listener
from gptoss_local.commands.serve_switch import ServeSwitcher, model_aliases, parallel_tune
from gptoss_local.errors import WishError
from gptoss_local.i18n import _
from gptoss_local.launch.engines import engine
from gptoss_local.launch.prepare import prepare
from gptoss_local.launch.resident import shape_before_load
from gptoss_local.library import Library
from gptoss_local.plan.wishes import Wishes, wishes_from
from gptoss_local.serve.browsing import BrowsingStreamer
from gptoss_local.serve.capacity import cache_ram_bytes
from gptoss_local.serve.guard import Guard, bind_problem
from gptoss_local.serve.resident import ResidentBackend
from gptoss_local.serve.runtime_file import EngineRecord, claim, update
from gptoss_local.serve.runtime_file import release as release_record
from gptoss_local.serve.server import ApiServer, make_server
from gptoss_local.serve.service import Service
from gptoss_local.units import duration


def run_serve(args: argparse.Namespace) -> int:
    """Serve until Ctrl-C; exit 0 then."""
    settings = config.load()
    wishes = wishes_from(args, settings)
    if engine(wishes.backend).remote:
        raise WishError(_("serve runs the model on this PC: --backend llamacpp or ollama"))
    key = args.api_key or os.environ.get("GPTOSS_LOCAL_API_KEY") or None
    problem = bind_problem(args.host, key)
    if problem:
        raise WishError(problem)  # before the load, which can take minutes
    guard = Guard(args.host, args.port, key, tuple(args.cors),
                  frozenset(h.lower() for h in args.allowed_host))  # fmt: skip
    # Claimed before the load: a second serve (or one started by another program at the
    # same moment) is refused before it loads a second copy.
    wanted = str(wishes.model_path) if wishes.model_path else wishes.model or ""
    record = EngineRecord("", os.getpid(), wanted, key)
    if args.unshared:  # a second model on purpose: not the machine's engine
        _load_and_serve(args, settings, wishes, guard, record)
        return 0
    claim(record)
    try:
        _load_and_serve(args, settings, wishes, guard, record)
    finally:
        release_record(record)  # after the model is freed: a gone file means a gone engine
    return 0


def _load_and_serve(
    args: argparse.Namespace,
    settings: config.Settings,
    wishes: Wishes,
    guard: Guard,
    record: EngineRecord,
) -> None:
    library = _library(settings) if args.browser else None  # refused before the load
    prepared = prepare(wishes, settings, warn=warn, tune=partial(parallel_tune, args.parallel))
    ready = prepared.ready
    assert ready is not None  # made ready: `serve` asks nothing first
    plan = prepared.plan
    memory = {"vram": plan.est_vram, "ram": plan.est_ram}
    load_now = args.load == "now"
    shape = None if load_now else shape_before_load(ready, prepared.wishes, plan)
    opener = partial(ready.open, LoadNotes())
    backend = ResidentBackend(opener, args.keep_alive, load_now, memory, shape)
    if backend.capabilities.keep_conversations:  # Ollama keeps its own caches
        backend.keep_conversations(cache_ram_bytes(args.cache_ram))
    stream = None
    if library is not None:
        stream = BrowsingStreamer(backend.stream, library, settings.docs, settings.max_tool_calls)
        print(_("the browser searches: {folders}").format(folders=", ".join(settings.docs)),
              file=sys.stderr)  # fmt: skip
    try:
        names = (ready.model, *model_aliases(prepared.preparation.catalog, ready.model))
        switcher = ServeSwitcher(args, settings, wishes)
        service = Service(
            backend, names, ready.generation, args.max_waiting, stream, record.instance, switcher
        )
        server = listen(service, guard)
        try:
            if not args.unshared:
                switcher.record = replace(record, url=server.url, model=ready.model)
                update(switcher.record)  # found from now on
        except BaseException:
            server.server_close()
            raise
        second = ollama_listener(service, guard, args.ollama_port) if args.ollama else None
        try:
            _serve(server, ready.model, guard, args.keep_alive)
        finally:
            if second is not None:
                second.stop()
    finally:
        backend.close()
        if library is not None:
            library.close()


def _library(settings: config.Settings) -> Library:
    """The index of the settings' `docs` folders, brought up to date, for `--browser`."""
    if not settings.docs:
        raise WishError(_("--browser: the browser has no folders to search"),
                        _("Add one with `gptoss-local docs add PATH`."))  # fmt: skip
    library = Library.open()
    try:
        library.update(settings.docs)
    except BaseException:
        library.close()
        raise
    return library


def listen(service: Service, guard: Guard) -> ApiServer:
    try:
        return make_server(service, guard)
    except OSError as exc:
        raise WishError(
            _("cannot listen on {host}:{port}: {error}").format(
                host=guard.host, port=guard.port, error=exc.strerror or exc
            ),
            _("Another program may use that port: pick another with --port N."),
        ) from None


def _serve(server: ApiServer, model: str, guard: Guard, keep_alive: float) -> None:
    _log_requests()
    if keep_alive == 0:
        print(_("the model is let go after each reply; the next request loads it again"),
              file=sys.stderr)  # fmt: skip
    elif keep_alive > 0:
        print(_("the model is let go after {time} without a request; the next one loads it "
                "again").format(time=duration(keep_alive)), file=sys.stderr)  # fmt: skip
    print(_("serving {model} at {url} (Ctrl-C stops)").format(model=model, url=server.url),
          file=sys.stderr)  # fmt: skip
    if guard.api_key:
        print(_("clients must send `Authorization: Bearer <the --api-key>`"), file=sys.stderr)

    def stop(*_args: object) -> None:
        raise KeyboardInterrupt

    # Ctrl-C, and the TERM a service manager sends, stop it cleanly (replies cancelled, model
    # freed); SIGINT set here too, as a shell leaves it ignored for a background job.
    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print(_("stopping"), file=sys.stderr)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        server.stop()


def _log_requests() -> None:
    """One line per request on stderr (method, path, status, time, tokens; no content)."""
    logger = logging.getLogger("gptoss_local.serve")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
