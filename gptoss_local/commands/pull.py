"""`gptoss-local pull [MODEL]`: download a model (or reuse a copy on disk), verified."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from gptoss_local import catalog, config, hardware, paths
from gptoss_local.backends.ollama import has_tag, pull
from gptoss_local.backends.ollama_daemon import OllamaDaemon
from gptoss_local.commands.progress_view import ProgressView
from gptoss_local.errors import WishError
from gptoss_local.plan import planner
from gptoss_local.store.offline import offline_reason
from gptoss_local.store.pull import PullOptions, pull_model
from gptoss_local.units import size_text

if TYPE_CHECKING:
    from gptoss_local.catalog import Catalog, ModelSpec
    from gptoss_local.config import Settings
    from gptoss_local.store.progress import Notice


def run_pull(args: argparse.Namespace) -> int:
    """Pull the model; print its path on stdout when it is ready."""

    settings = config.load()
    cat = catalog.load()
    if getattr(args, "backend", None) == "ollama":
        return _pull_ollama(args, cat, settings)
    with ProgressView(args.quiet) as view:
        spec = choose_spec(args.model, cat, settings, view.notice)
        options = PullOptions(
            source=args.source,
            preferred=settings.source,
            offline=args.offline,
            reuse=not args.no_reuse,
        )
        size = size_text(spec.total_bytes)
        view.notice(f"pulling {spec.name} ({size}) into {paths.models_dir()}")
        result = pull_model(spec, cat, options, view.progress, view.notice)
    for outcome in result.files:
        if outcome.how != "present" and not args.quiet:
            print(f"{outcome.name}: {outcome.how} from {outcome.source}", file=sys.stderr)
    if not args.quiet:
        print(f"{spec.name} is ready and verified:", file=sys.stderr)
    print(result.path)
    return 0


def _pull_ollama(args: argparse.Namespace, cat: Catalog, settings: Settings) -> int:
    """Pull the model's Ollama tag through an adopted or started Ollama; print the tag."""

    if args.source:
        raise WishError("--source applies to the models folder, not --backend ollama")
    offline = offline_reason(args.offline)
    with ProgressView(args.quiet) as view:
        spec = choose_spec(args.model, cat, settings, view.notice)
        daemon = OllamaDaemon(view.notice)
        try:
            import ollama

            client = ollama.Client(host=daemon.ensure())
            if offline and has_tag(client, spec.ollama_tag):
                view.notice(f"offline mode is on ({offline}): {spec.ollama_tag} is in Ollama "
                            "already and is not checked for a newer version")  # fmt: skip
            else:
                view.notice(f"pulling {spec.ollama_tag} into Ollama at {daemon.url}")
                pull(client, spec.ollama_tag, view.progress, offline=args.offline)
        finally:
            daemon.stop()
    if not args.quiet:
        print(f"{spec.ollama_tag} is ready in Ollama:", file=sys.stderr)
    print(spec.ollama_tag)
    return 0


def choose_spec(name: str | None, cat: Catalog, settings: Settings, notice: Notice) -> ModelSpec:
    """The model named on the command line, else the one the planner picks for this machine."""

    wanted = name or (None if settings.model == "auto" else settings.model)
    if wanted:
        return cat.model(wanted)

    plan = planner.plan(hardware.probe(), cat, planner.Wishes())
    if plan.model is None:
        raise WishError(
            "no model fits this machine, so there is no default to pull; name one: "
            "`gptoss-local pull 20b` (see `gptoss-local doctor` for why)"
        )
    notice(f"no model named: {plan.model} is the one planned for this machine (see doctor)")
    return cat.model(plan.model)
