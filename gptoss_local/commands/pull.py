"""`gptoss-local pull [MODEL]`: download a model (or reuse a copy on disk), verified; with the
Ollama backend, into Ollama's own store."""

from __future__ import annotations

import argparse
import sys

from gptoss_local import catalog, config, hardware, paths
from gptoss_local.catalog import Catalog, ModelSpec
from gptoss_local.commands.progress_view import ProgressView
from gptoss_local.config import Settings
from gptoss_local.errors import WishError
from gptoss_local.i18n import _
from gptoss_local.launch.engines import engine
from gptoss_local.plan.planner import plan
from gptoss_local.plan.wishes import Wishes
from gptoss_local.store.progress import Notice
from gptoss_local.store.pull import PullOptions
from gptoss_local.units import size_text


def run_pull(args: argparse.Namespace) -> int:
    """Pull the model; print its path (or Ollama tag) on stdout when it is ready."""
    settings = config.load()
    cat = catalog.load()
    chosen = engine(args.backend or settings.backend)
    options = PullOptions(
        source=args.source,
        preferred=settings.source,
        offline=args.offline,
        reuse=not args.no_reuse,
    )
    with ProgressView(args.quiet) as view:
        spec = choose_spec(args.model, cat, settings, view.notice)
        if chosen.uses_models_folder:
            size = size_text(spec.total_bytes)
            view.notice(
                _("pulling {model} ({size}) into {folder}").format(
                    model=spec.name, size=size, folder=paths.models_dir()
                )
            )
        pulled = chosen.pull(spec, cat, options, view.progress, view.notice)
    if not args.quiet:
        for note in pulled.notes:
            print(note, file=sys.stderr)
    print(pulled.result)
    return 0


def choose_spec(name: str | None, cat: Catalog, settings: Settings, notice: Notice) -> ModelSpec:
    """The model named on the command line, else the one the planner picks for this machine."""
    wanted = name or (None if settings.model == "auto" else settings.model)
    if wanted:
        return cat.model(wanted)
    planned = plan(hardware.probe(), cat, Wishes())
    if planned.model is None:
        raise WishError(
            _(
                "no model fits this machine, so there is no default to pull; name one: "
                "`gptoss-local pull 20b` (see `gptoss-local doctor` for why)"
            )
        )
    notice(
        _("no model named: {model} is the one planned for this machine (see doctor)").format(
            model=planned.model
        )
    )
    return cat.model(planned.model)
