"""What `chat` settles before the first message: model, plan, weights and engine.

The first-run screen (`tui/first_run.py`) shows these and lets the user change them; the logic
lives here so it is tested without a terminal. The screen appears when there is a question to
ask: on the very first run (no settings file yet) or when the chosen model's weights are
missing. Later runs load the remembered model at once.
"""

from __future__ import annotations

import argparse
import dataclasses
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gptoss_local import catalog as catalog_mod
from gptoss_local import config, paths
from gptoss_local.backends.base import Backend, GenerationSettings, LoadProgress
from gptoss_local.catalog import Catalog, ModelSpec
from gptoss_local.errors import WishError
from gptoss_local.hardware.machine import Hardware, probe
from gptoss_local.plan.planner import Plan, plan
from gptoss_local.plan.wishes import Wishes
from gptoss_local.setup.runner import ModelChoice, choose_model, load_planned, ollama_opener
from gptoss_local.store.progress import ProgressFn
from gptoss_local.store.pull import (
    PullOptions,
    bytes_on_disk,
    free_bytes,
    ordered_sources,
    pull_model,
)
from gptoss_local.store.spec_from_file import spec_for_file

Opener = Callable[[LoadProgress], Backend]


@dataclass(frozen=True)
class Choices:
    """The answers to the first-run questions. None leaves model and context to the planner."""

    model: str | None = None
    context: int | None = None
    backend: str = "llamacpp"
    effort: str = "medium"


@dataclass(frozen=True)
class Fixed:
    """Which answers the command line gave (`--model`, `--effort`, …): not asked again."""

    model: bool = False
    context: bool = False
    backend: bool = False
    effort: bool = False

    @property
    def everything(self) -> bool:
        """Whether no question is left (context has a good default, so it is not needed)."""
        return self.model and self.backend and self.effort


@dataclass(frozen=True)
class Weights:
    """The planned model's files in the models folder."""

    spec: ModelSpec
    path: Path  # the entry file handed to llama.cpp
    on_disk: int  # bytes here already, partial downloads included
    free_disk: int
    sources: tuple[str, ...]  # in the order they are tried

    @property
    def present(self) -> bool:
        """Whether every byte is here (verified when pulled)."""
        return self.on_disk >= self.spec.total_bytes

    @property
    def missing(self) -> int:
        """Bytes still to download."""
        return max(0, self.spec.total_bytes - self.on_disk)


@dataclass(frozen=True)
class Ready:
    """What the chat app needs to load the model and chat."""

    model: str
    open: Opener
    generation: GenerationSettings
    warnings: tuple[str, ...] = ()


class Setup:
    """The first-run decisions for one machine, settings file and command line.

    Args:
        hardware: What `hardware.probe()` found.
        catalog: The models and download sources.
        settings: The settings file's defaults.
        args: The `chat` command line (`model`, `context`, `effort`, `backend`, `cpu_moe`,
            `model_path`, `cpu_sampling`); missing attributes count as not given.
        first_run: Whether this is the first run (the settings file does not exist).
    """

    def __init__(
        self,
        hardware: Hardware,
        catalog: Catalog,
        settings: config.Settings,
        args: argparse.Namespace,
        first_run: bool,
    ) -> None:
        self.hardware, self.catalog, self.settings = hardware, catalog, settings
        self.args, self.first_run = args, first_run
        self.fixed = Fixed(
            **{f.name: getattr(args, f.name, None) is not None for f in dataclasses.fields(Fixed)}
        )
        self.model_path: Path | None = getattr(args, "model_path", None)

    @classmethod
    def probe(cls, args: argparse.Namespace) -> Setup:
        """Probe this machine and read the settings file and manifest."""

        first_run = not paths.settings_file().exists()
        return cls(probe(), catalog_mod.load(), config.load(), args, first_run)

    def initial(self) -> Choices:
        """The command line over the settings file."""

        a, s = self.args, self.settings
        model = getattr(a, "model", None) or (None if s.model == "auto" else s.model)
        if model is not None and self.model_path is None:
            model = self.catalog.model(model).name  # an alias ("20b"): the name, as listed
        context = getattr(a, "context", None) or s.context or None
        return Choices(
            model=model,
            context=context,
            backend=getattr(a, "backend", None) or s.backend,
            effort=getattr(a, "effort", None) or s.effort,
        )

    def plan(self, choices: Choices) -> Plan:
        """The planner's answer for `choices` (raises WishError for an unknown model)."""

        wishes = Wishes(
            model=choices.model,
            context=choices.context,
            effort=choices.effort,
            backend=choices.backend,
            cpu_moe_layers=getattr(self.args, "cpu_moe", None),
        )
        return plan(self.hardware, self.catalog, wishes, spec=self._file_spec())

    def weights(self, plan: Plan) -> Weights | None:
        """The planned model's files; None when there is nothing to download (a file given
        with --model-path, the Ollama backend, or no model fits)."""
        if self.model_path is not None or plan.backend == "ollama" or plan.model is None:
            return None

        spec = self.catalog.model(plan.model)
        folder = paths.models_dir()
        on_disk = bytes_on_disk(spec, folder)
        sources = ordered_sources(self.catalog, None, self.settings.source)
        return Weights(
            spec=spec,
            path=folder / spec.entry_file.name,
            on_disk=on_disk,
            free_disk=free_bytes(folder),
            sources=tuple(s.name for s in sources),
        )

    def needs_screen(self) -> bool:
        """Whether to ask before loading: first run with questions open, missing weights, or
        no model that fits."""
        if self.model_path is not None:
            return False
        plan = self.plan(self.initial())
        if plan.model is None:
            return True
        weights = self.weights(plan)
        if weights is not None and not weights.present:
            return True
        return self.first_run and not self.fixed.everything

    def download(
        self,
        spec: ModelSpec,
        progress: ProgressFn,
        cancel: threading.Event,
        notice: Callable[[str], None] = lambda _text: None,
    ) -> Path:
        """Pull `spec` into the models folder (resumable); raises StoreError or PullCancelled.
        `notice` hears retries and source switches."""

        options = PullOptions(preferred=self.settings.source, cancel=cancel)
        return pull_model(spec, self.catalog, options, progress, notice).path

    def remember(self, choices: Choices, plan: Plan) -> None:
        """Save the answers as the defaults of the next run (model by name: the last one)."""
        if self.model_path is not None:
            return
        settings = dataclasses.replace(
            self.settings,
            model=plan.model or self.settings.model,
            context=choices.context or 0,
            backend=choices.backend,
            effort=choices.effort,
        )
        config.save(settings)
        self.settings, self.first_run = settings, False

    def ready(self, choices: Choices, plan: Plan) -> Ready:
        """How to open the backend `plan` describes, and the generation settings that suit it."""
        effort = choices.effort
        if plan.backend == "ollama":
            tag = self._ollama_tag(plan)
            opener = ollama_opener(tag, plan.context)
            return Ready(tag, opener, GenerationSettings(effort=effort), plan.warnings)
        choice = self._choice(plan)
        cat = self.catalog

        def open_llama(progress: LoadProgress) -> Backend:

            return load_planned(cat, choice, plan, progress)

        # Sampling inside the GPU graph: measured 306 vs 193 t/s at gpt-oss's defaults.
        on_gpu = plan.gpu_layers != 0 and not getattr(self.args, "cpu_sampling", False)
        generation = GenerationSettings(effort=effort, backend_sampling=on_gpu)
        return Ready(choice.spec.name, open_llama, generation, plan.warnings)

    def _choice(self, plan: Plan) -> ModelChoice:

        return choose_model(self.catalog, self.model_path, plan)

    def _file_spec(self) -> ModelSpec | None:
        if self.model_path is None:
            return None

        return spec_for_file(self.model_path, self.catalog)

    def _ollama_tag(self, plan: Plan) -> str:

        if plan.model is None:
            raise WishError("no model fits this machine:\n" + "\n".join(plan.warnings))
        return self.catalog.model(plan.model).ollama_tag
