"""The engines gptoss-local chats through, by name: how each opens the planned model and how it
gets the model's weights. `run`, `serve`, `chat`, the first-run screen and `pull` look an engine
up here rather than comparing backend names."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gptoss_local.backends.base import Backend, GenerationSettings, LoadProgress
from gptoss_local.backends.llamacpp.options import LlamaOptions
from gptoss_local.backends.ollama.backend import client_for, has_tag, pull_tag
from gptoss_local.backends.ollama.daemon import OllamaDaemon
from gptoss_local.backends.openai.backend import OpenAIClientBackend
from gptoss_local.catalog import Catalog, ModelSpec
from gptoss_local.errors import WishError
from gptoss_local.i18n import _, translate
from gptoss_local.kinds import TRAITS, BackendName, Traits
from gptoss_local.launch.runner import choose_model, load_planned, ollama_opener
from gptoss_local.plan.drafting import why_drafts_do_not_pay
from gptoss_local.plan.planner import Plan
from gptoss_local.plan.wishes import Wishes
from gptoss_local.store.offline import offline_reason
from gptoss_local.store.progress import Notice, ProgressFn
from gptoss_local.store.pull import PullOptions, pull_model
from gptoss_local.urls import server_url_problem

Opener = Callable[[LoadProgress], Backend]


@dataclass(frozen=True)
class Ready:
    """What the chat (or `run`) needs to load the model and generate; `path`: the GGUF file
    the user named (--model-path), which a switch of the machine's engine names too."""

    model: str
    open: Opener
    generation: GenerationSettings
    warnings: tuple[str, ...] = ()
    path: Path | None = None


@dataclass(frozen=True)
class Pulled:
    """What a pull made ready: the line for stdout (a path or a tag) and notes for stderr."""

    result: str
    notes: tuple[str, ...]


@dataclass(frozen=True)
class Engine:
    """One engine: its traits (`kinds.TRAITS`), how to open and how to pull a model.

    Attributes:
        ready: The planned model made ready to open (nothing is loaded yet).
        pull: Make the model's weights available to the engine.
    """

    name: BackendName
    ready: Callable[[Catalog, Plan, Wishes], Ready]
    pull: Callable[[ModelSpec, Catalog, PullOptions, ProgressFn, Notice], Pulled]

    @property
    def traits(self) -> Traits:
        """What the engine is (label, in process, where its weights live)."""
        return TRAITS[self.name]

    @property
    def label(self) -> str:
        """How the first-run screen names it, in the user's language."""
        return translate(self.traits.label)

    @property
    def remote(self) -> bool:
        """Whether the model runs on a server elsewhere (no plan, no download here)."""
        return self.traits.remote

    @property
    def uses_models_folder(self) -> bool:
        """Whether its weights are files in the models folder (else it keeps its own store)."""
        return self.traits.uses_models_folder


def _llama_ready(catalog: Catalog, plan: Plan, wishes: Wishes) -> Ready:
    choice = choose_model(catalog, wishes.model_path, plan)

    draft, warnings = wishes.draft, plan.warnings
    head = wishes.draft_model if draft == "eagle3" else None
    if head is not None and not head.is_file():
        raise WishError(_("no EAGLE-3 head at {path}").format(path=head))
    why_not = why_drafts_do_not_pay(plan) if draft else None
    if why_not:
        draft, head, warnings = "", None, (*warnings, why_not)
    # Sampling inside the GPU graph: measured 306 vs 193 t/s at gpt-oss's defaults on an H200.
    # A drafting reply samples on the CPU until drafting gives up for it (`sampling.Sampler`).
    in_graph = plan.gpu_layers != 0 and not wishes.cpu_sampling
    options = LlamaOptions(backend_sampling=in_graph, draft=draft)

    def open_llama(progress: LoadProgress) -> Backend:
        return load_planned(catalog, choice, plan, progress, options, wishes.parallel, head)

    generation = GenerationSettings(effort=wishes.effort)
    return Ready(choice.spec.name, open_llama, generation, warnings, wishes.model_path)


def _ollama_ready(catalog: Catalog, plan: Plan, wishes: Wishes) -> Ready:
    if plan.model is None:
        raise WishError(_("no model fits this machine:") + "\n" + "\n".join(plan.warnings))
    tag = catalog.model(plan.model).ollama_tag
    opener: Opener = ollama_opener(tag, plan.context)
    return Ready(tag, opener, GenerationSettings(effort=wishes.effort), plan.warnings)


def _openai_ready(catalog: Catalog, plan: Plan, wishes: Wishes) -> Ready:
    url, key = wishes.base_url, wishes.api_key
    if not url:
        raise WishError(
            _(
                "--backend openai needs the chat server's address: --base-url URL (or "
                "OPENAI_BASE_URL), e.g. http://192.168.1.20:8080/v1 for another PC's "
                "`gptoss-local serve`"
            )
        )
    problem = server_url_problem(url, wishes.allow_http)
    if problem:
        raise WishError(_("--base-url {url}: {problem}").format(url=url, problem=problem))
    model = wishes.model if "model" in wishes.given else None  # the settings' is a local one

    def open_client(progress: LoadProgress) -> Backend:
        progress(0.0, _("connecting to {url}").format(url=url))
        return OpenAIClientBackend(url, model, key)

    return Ready(
        model or _("the server's model"), open_client, GenerationSettings(effort=wishes.effort)
    )


def _pull_from_server(
    spec: ModelSpec, catalog: Catalog, options: PullOptions, progress: ProgressFn, notice: Notice
) -> Pulled:
    raise WishError(
        _(
            "the openai backend chats with a server's own model: there is nothing to pull here "
            "(pull on the server)"
        )
    )


def _pull_into_models_folder(
    spec: ModelSpec, catalog: Catalog, options: PullOptions, progress: ProgressFn, notice: Notice
) -> Pulled:
    result = pull_model(spec, catalog, options, progress, notice)
    notes = [
        _("{file}: {how} from {source}").format(file=o.name, how=o.how, source=o.source)
        for o in result.files
        if o.how != "present"
    ]
    ready = _("{model} is ready and verified:").format(model=spec.name)
    return Pulled(str(result.path), (*notes, ready))


def _pull_into_ollama(
    spec: ModelSpec, catalog: Catalog, options: PullOptions, progress: ProgressFn, notice: Notice
) -> Pulled:
    if options.source:
        raise WishError(_("--source applies to the models folder, not the Ollama backend"))
    tag, offline = spec.ollama_tag, offline_reason(options.offline, options.env)
    daemon = OllamaDaemon(notice)
    try:
        client = client_for(daemon.ensure())
        if offline and has_tag(client, tag):
            notice(_("offline mode is on ({reason}): {tag} is in Ollama already and is not "
                     "checked for a newer version").format(reason=offline, tag=tag))  # fmt: skip
        else:
            notice(_("pulling {tag} into Ollama at {url}").format(tag=tag, url=daemon.url))
            pull_tag(client, tag, progress, offline=options.offline)
    finally:
        daemon.stop()
    return Pulled(tag, (_("{tag} is ready in Ollama:").format(tag=tag),))


ENGINES: dict[BackendName, Engine] = {
    "llamacpp": Engine("llamacpp", _llama_ready, _pull_into_models_folder),
    "ollama": Engine("ollama", _ollama_ready, _pull_into_ollama),
    "openai": Engine("openai", _openai_ready, _pull_from_server),
}


def engine(name: BackendName) -> Engine:
    """The engine called `name` (the names are `kinds.BACKENDS`)."""
    return ENGINES[name]
