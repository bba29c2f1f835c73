"""What a command settles before the model loads: model, plan, weights and engine.

`run`, `serve` and `bench` go through it without asking (`launch.prepare`); `chat` asks on the
first-run screen (`tui/first_run.py`), which shows these and lets the user change them; the logic
lives here so it is tested without a terminal. The screen appears when there is a question to
ask: on the very first run (no settings file yet) or when the chosen model's weights are
missing. Later runs load the remembered model at once.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gptoss_local import catalog as catalog_mod
from gptoss_local import config, paths
from gptoss_local.catalog import Catalog, ModelSpec
from gptoss_local.engine_setup.advice import check_engine
from gptoss_local.hardware.machine import Hardware, probe
from gptoss_local.i18n import active_language
from gptoss_local.launch.engines import Opener, Ready, engine
from gptoss_local.launch.file_spec import spec_for_file
from gptoss_local.plan.planner import Plan, plan
from gptoss_local.plan.wishes import Wishes
from gptoss_local.store.progress import ProgressFn
from gptoss_local.store.pull import (
    PullOptions,
    bytes_on_disk,
    free_bytes,
    ordered_sources,
    pull_model,
    regional_first,
)

__all__ = ["Opener", "Preparation", "Ready", "Weights"]


@dataclass(frozen=True)
class Weights:
    """The planned model's files in the models folder."""

    spec: ModelSpec
    path: Path  # the entry file handed to llama.cpp
    on_disk: int  # bytes here already, partial downloads included
    free_disk: int
    sources: tuple[str, ...]  # in the order they are tried
    regional: tuple[str, ...] = ()  # those put first for the user's language

    @property
    def present(self) -> bool:
        """Whether every byte is here (verified when pulled)."""
        return self.on_disk >= self.spec.total_bytes

    @property
    def missing(self) -> int:
        """Bytes still to download."""
        return max(0, self.spec.total_bytes - self.on_disk)


class Preparation:
    """The decisions before a model loads, for one machine, settings file and command line:
    which model and plan, its weights, the engine made ready, and what the first run asks.

    Args:
        hardware: What `hardware.probe()` found.
        catalog: The models and download sources.
        settings: The settings file's defaults.
        wishes: The command line over the settings file (`plan.wishes.wishes_from`).
        first_run: Whether this is the first run (the settings file does not exist).
        engine_advice: What to do about a CPU-only engine beside an NVIDIA GPU, if that is so
            (`engine_setup.advice.check_engine`).
    """

    def __init__(
        self,
        hardware: Hardware,
        catalog: Catalog,
        settings: config.Settings,
        wishes: Wishes,
        first_run: bool,
        engine_advice: str | None = None,
    ) -> None:
        self.hardware, self.catalog, self.settings = hardware, catalog, settings
        self.wishes, self.first_run = wishes, first_run
        self.engine_advice = engine_advice
        self._spec: ModelSpec | None = None  # --model-path's, read once (its header is checked)

    @classmethod
    def probe(cls, wishes: Wishes, settings: config.Settings) -> Preparation:
        """Probe this machine and read the manifest; `settings` is the settings file read."""
        first_run = not paths.settings_file().exists()
        hardware = probe()
        advice = check_engine(hardware)
        return cls(hardware, catalog_mod.load(), settings, wishes, first_run, advice)

    @property
    def model_path(self) -> Path | None:
        """The GGUF file given with --model-path, if one was."""
        return self.wishes.model_path

    def given(self, field: str) -> bool:
        """Whether the command line answered this question (`model`, `effort`, …)."""
        return field in self.wishes.given

    def initial(self) -> Wishes:
        """The wishes to start from, a model alias ("20b") turned into its name, as listed
        (a server's model stays as typed: the server names its models)."""
        model = self.wishes.model
        if model is not None and self.model_path is None and not self.remote:
            model = self.catalog.model(model).name
        return dataclasses.replace(self.wishes, model=model)

    @property
    def remote(self) -> bool:
        """Whether the engine asked for runs the model on a server elsewhere."""
        return engine(self.wishes.backend).remote

    def plan(self, wishes: Wishes) -> Plan:
        """The planner's answer for `wishes` (UnknownModelError for an unknown model); for a
        server's model, this PC's plan of the default model (only its warnings matter)."""
        if engine(wishes.backend).remote:
            wishes = dataclasses.replace(wishes, model=None)
        return plan(self.hardware, self.catalog, wishes, spec=self.file_spec())

    def weights(self, plan: Plan) -> Weights | None:
        """The planned model's files; None when there is nothing to download (a file given
        with --model-path, the Ollama backend, or no model fits)."""
        uses_folder = engine(plan.backend).uses_models_folder
        if self.model_path is not None or not uses_folder or plan.model is None:
            return None

        spec = self.catalog.model(plan.model)
        folder = paths.models_dir()
        on_disk = bytes_on_disk(spec, folder)
        language = active_language()
        sources = ordered_sources(self.catalog, None, self.settings.source, language)
        return Weights(
            spec=spec,
            path=folder / spec.entry_file.name,
            on_disk=on_disk,
            free_disk=free_bytes(folder),
            sources=tuple(s.name for s in sources),
            regional=regional_first(language, self.settings.source),
        )

    def needs_screen(self) -> bool:
        """Whether to ask before loading: first run with questions open, missing weights, or
        no model that fits."""
        if self.model_path is not None or self.remote:
            return False  # nothing to ask: a file, or a server, was named
        plan = self.plan(self.initial())
        if plan.model is None:
            return True
        weights = self.weights(plan)
        if weights is not None and not weights.present:
            return True
        return self.first_run and not self.wishes.everything_given

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

    def remember(self, wishes: Wishes, plan: Plan) -> None:
        """Save the answers as the defaults of the next run (model by name: the last one)."""
        if self.model_path is not None:
            return
        settings = dataclasses.replace(
            self.settings,
            model=plan.model or self.settings.model,
            context=wishes.context or 0,
            # A server is named per run (--base-url): the saved engine stays a local one.
            backend=self.settings.backend if engine(wishes.backend).remote else wishes.backend,
            effort=wishes.effort,
        )
        config.save(settings)
        self.settings, self.first_run = settings, False

    def ready(self, wishes: Wishes, plan: Plan) -> Ready:
        """How to open the backend `plan` describes, and the generation settings that suit it."""
        return engine(plan.backend).ready(self.catalog, plan, wishes)

    def file_spec(self) -> ModelSpec | None:
        """The spec of the file given with --model-path (None without one), read from its
        header on the first call only: the set-up screen plans again on every change."""
        if self.model_path is None:
            return None
        if self._spec is None:
            self._spec = spec_for_file(self.model_path, self.catalog)
        return self._spec
