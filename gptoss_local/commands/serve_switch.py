"""How `serve` resolves the model a switch asks for (`serve.switch`): as it resolved its own,
through `prepare` with the same flags (engine, context, GPUs, replies decoded together), only
the model changed; and, once switched, the runtime file names the new model."""

from __future__ import annotations

import argparse
from dataclasses import replace
from functools import partial
from pathlib import Path

from gptoss_local import config
from gptoss_local.catalog import Catalog
from gptoss_local.commands.notes import LoadNotes, note, warn
from gptoss_local.errors import UnknownModelError
from gptoss_local.i18n import _
from gptoss_local.launch.prepare import prepare
from gptoss_local.plan.planner import Plan
from gptoss_local.plan.wishes import Wishes
from gptoss_local.serve.capacity import GPU_PARALLEL
from gptoss_local.serve.runtime_file import EngineRecord, update
from gptoss_local.serve.switch import Choice


class ServeSwitcher:
    """`serve`'s `Switcher`.

    Args:
        args: `serve`'s command line (its --parallel).
        settings: The settings file read.
        wishes: What `serve` planned its first model for.
        record: The runtime file's record once the server listens (None: `--unshared`, or
            not listening yet); `switched` updates it.
    """

    def __init__(self, args: argparse.Namespace, settings: config.Settings, wishes: Wishes) -> None:
        self.args, self.settings, self.wishes = args, settings, wishes
        self.record: EngineRecord | None = None

    def resolve(self, model: str | None, model_path: str | None) -> Choice:
        """The model named, prepared as `serve` prepares its own (nothing loaded)."""
        path = Path(model_path).expanduser() if model_path is not None else None
        wishes = replace(self.wishes, model=None if path else model, model_path=path)
        tune = partial(parallel_tune, self.args.parallel)
        prepared = prepare(wishes, self.settings, warn=warn, tune=tune)
        ready, plan = prepared.ready, prepared.plan
        assert ready is not None  # made ready: `serve` asks nothing first
        names = (ready.model, *model_aliases(prepared.preparation.catalog, ready.model))
        memory = {"vram": plan.est_vram, "ram": plan.est_ram}
        return Choice(names, partial(ready.open, LoadNotes()), ready.generation, memory)

    def switched(self, choice: Choice) -> None:
        """Name the new model in the runtime file, and on stderr."""
        if self.record is not None:
            self.record = replace(self.record, model=choice.names[0])
            update(self.record)
        note(_("switched to {model}").format(model=choice.names[0]))


def parallel_tune(asked: int | None, wishes: Wishes, plan: Plan) -> Wishes:
    """Replies decoded together: `GPU_PARALLEL` when the model runs on a GPU, unless
    --parallel said how many, or drafts were asked for (they speed up one reply at a time;
    replies decoded together take none)."""
    if asked is None and plan.gpu_layers != 0 and not wishes.draft:
        return replace(wishes, parallel=GPU_PARALLEL)
    return wishes


def model_aliases(catalog: Catalog, model: str) -> tuple[str, ...]:
    """The catalog's other names for `model` (none for a file of one's own or an Ollama tag)."""
    try:
        return catalog.model(model).aliases
    except UnknownModelError:  # a file of one's own, or an Ollama tag
        return ()
