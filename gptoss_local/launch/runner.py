"""From a plan to a loaded backend: which file to load, and the openers of the two engines
(`launch.engines` picks one by name). Shared by `run`, `serve`, `bench` and the chat."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from gptoss_local import heap, paths
from gptoss_local.backends.base import BackendError, LoadProgress, no_load_progress
from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
from gptoss_local.backends.llamacpp.load import LoadSettings
from gptoss_local.backends.llamacpp.options import LlamaOptions
from gptoss_local.backends.ollama.backend import OllamaBackend
from gptoss_local.backends.ollama.daemon import OllamaDaemon
from gptoss_local.catalog import Catalog, ModelSpec
from gptoss_local.errors import WishError
from gptoss_local.hardware.machine import probe
from gptoss_local.i18n import _
from gptoss_local.launch.file_spec import spec_for_file
from gptoss_local.plan.planner import Plan, plan
from gptoss_local.plan.wishes import Wishes
from gptoss_local.store.progress import Progress

Notice = Callable[[str], None]


@dataclass(frozen=True)
class ModelChoice:
    """The model to load: its spec (from the manifest, or read from the file) and its path."""

    spec: ModelSpec
    path: Path


def choose_model(cat: Catalog, model_path: Path | None, plan: Plan | None) -> ModelChoice:
    """The file to load: `--model-path` as given, else the planned model in the models folder."""
    if model_path is not None:
        return ModelChoice(spec_for_file(model_path, cat), model_path)
    if plan is None or plan.model is None:
        warnings = plan.warnings if plan else ()
        raise WishError(_("no model fits this machine:") + "\n" + "\n".join(warnings))
    spec = cat.model(plan.model)
    path = paths.models_dir() / spec.entry_file.name
    if not path.is_file():
        alias = (spec.aliases or (spec.name,))[0]
        raise WishError(
            _(
                "{model} is not downloaded: {path} does not exist. Download it with "
                "`gptoss-local pull {alias}`, adopt a copy you have with "
                "`gptoss-local import FILE`, or pass --model-path FILE."
            ).format(model=spec.name, path=path, alias=alias)
        )
    return ModelChoice(spec, path)


def load_planned(
    cat: Catalog,
    choice: ModelChoice,
    the_plan: Plan,
    progress: LoadProgress = no_load_progress,
    options: LlamaOptions | None = None,
    sequences: int = 1,
    draft_model: Path | None = None,
) -> LlamaCppBackend:
    """Load `choice` into llama.cpp as `the_plan` says, with `options` for its replies,
    `sequences` replies decoded together and an EAGLE-3 head `draft_model` drafting; an
    out-of-memory failure gets a hint with a plan that fits the memory free now."""

    log_dir = paths.ensure_dir(paths.logs_dir())
    head = str(draft_model) if draft_model is not None else None
    try:
        settings = replace(LoadSettings.from_plan(the_plan), sequences=sequences, draft_model=head)
        backend = LlamaCppBackend(choice.path, settings, log_dir / "llama.log", progress, options)
    except BackendError as exc:
        if exc.kind == "out_of_memory":
            exc.hint = _plan_that_fits_now(cat, choice.spec) or exc.hint
        raise
    heap.settle(freeze=True)  # the load's garbage now, not in the first reply
    return backend


def _plan_that_fits_now(cat: Catalog, spec: ModelSpec) -> str | None:
    """After a failed load has freed its memory: the flags of a plan that fits what is free."""

    hardware = probe()
    fresh = plan(hardware, cat, Wishes(), spec=spec)
    if not fresh.fits:
        return None
    flags = f"--cpu-moe {fresh.cpu_moe_layers} --context {fresh.context}"
    if len(hardware.gpus) > 1 and fresh.gpu_indices:  # the cards it was planned on
        flags += " --gpus " + ",".join(map(str, fresh.gpu_indices))
    return _(
        "With the memory free now this would fit: {flags} (`gptoss-local doctor {flags}`)."
    ).format(flags=flags)


def ollama_opener(tag: str, context: int) -> Callable[[LoadProgress], OllamaBackend]:
    """Opens `tag` on an adopted or started Ollama, pulling it first if Ollama lacks it; what
    the daemon and the pull report goes to the progress callback."""

    def open_ollama(progress: LoadProgress) -> OllamaBackend:

        def notice(text: str) -> None:
            progress(0.0, text)

        def pulled(p: Progress) -> None:
            what = _("Ollama is downloading {tag}").format(tag=tag)
            progress(p.done / p.total if p.total else 0.0, what)

        notice(_("starting Ollama"))
        backend = OllamaBackend(OllamaDaemon(notice), tag, context=context)
        if not backend.has_model():
            backend.pull(progress=pulled)
        return backend

    return open_ollama
