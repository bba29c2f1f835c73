"""Using the engine this machine already runs (a `serve` found through its runtime file)
instead of loading a second copy of the model: `over_engine` turns a command's prepared
`Ready` into one that opens a client of that engine, when it holds the model wanted, or
once it has switched to it (`engine_switch`), when the command's `Ask` says so."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from gptoss_local.backends.base import Backend, BackendInfo, Capabilities, LoadProgress
from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
from gptoss_local.backends.ollama.backend import OllamaBackend
from gptoss_local.backends.openai.backend import OpenAIClientBackend
from gptoss_local.errors import WishError
from gptoss_local.i18n import _
from gptoss_local.launch.engine_start import start_engine
from gptoss_local.launch.engine_switch import Ask, switch_body, switch_engine
from gptoss_local.launch.engines import Ready, engine
from gptoss_local.plan.planner import Plan
from gptoss_local.plan.wishes import Wishes
from gptoss_local.serve.find_engine import Engine, find_engine
from gptoss_local.serve.model_names import accepts


def _no_notice(_text: str) -> None:
    """Hears nothing."""


START_WAIT_SECONDS = 300.0  # an engine loading its model: a command waits rather than load too


def over_engine(
    ready: Ready,
    wishes: Wishes,
    start: bool = False,
    notice: Callable[[str], None] = _no_notice,
    client: str = "gptoss-local",
    switch: Ask | None = None,
) -> Ready:
    """`ready`, opening the resident engine instead when one runs with the model wanted (a
    command that reaches a server of its own choosing, `--base-url`, is left as it is).

    Args:
        ready: The command's model, prepared to load in this process.
        wishes: What the command line asked (its engine).
        start: Start the engine in the background when none runs (`engine_start`).
        notice: Hears what is being done (stderr).
        client: The command, as the engine shows who uses it (`ps`).
        switch: Asked whether to switch an engine that holds another model (None: the
            command cannot ask, and the refusal says nothing of --switch).

    Raises:
        OtherModel: the engine holds another model (a second copy would take its memory
            beside it) and is not to be switched: the message names both and what to do.
        WishError: the switch was refused or failed (the engine's words).
        EngineFileError: the runtime file cannot be trusted (`find_engine`).
    """
    if engine(wishes.backend).remote:
        return ready
    found = find_engine(wait=START_WAIT_SECONDS)
    if found is None and start:
        found = start_engine(ready, wishes, notice)
    if found is None:
        return ready
    if found.starting:
        raise WishError(
            _("the engine on this machine (PID {pid}) is still starting").format(
                pid=found.record.pid),
            _("Try again once it serves (`gptoss-local ps` shows it)."),
        )  # fmt: skip
    if not accepts(ready.model, found.names):
        if switch is None or not switch(found, ready.model):
            raise OtherModel(found, ready.model, switch is not None)
        notice(_("switching the engine to {model}").format(model=ready.model))
        found = switch_engine(found, switch_body(ready.model, ready.path))
    return through(ready, found, client)


def through(ready: Ready, found: Engine, client: str) -> Ready:
    """`ready`, opening a client of the engine `found` instead of loading the model here."""
    url, model, key = found.url, found.record.model, found.record.key

    def open_engine(progress: LoadProgress) -> Backend:
        progress(0.0, _("using the engine at {url}").format(url=url))
        return OpenAIClientBackend(url, model, key, client)

    return replace(ready, model=model, open=open_engine)


class OtherModel(WishError):
    """The refusal of a second model beside the engine's (`found` holds another than
    `wanted`); `flag`: the hint names --switch."""

    def __init__(self, found: Engine, wanted: str, flag: bool = False) -> None:
        hint = (
            _("Ask for {model} instead, switch the engine to {wanted} with --switch, or end it "
              "with `gptoss-local stop` and try again.")
            if flag
            else _("Ask for {model} instead, or end the engine with `gptoss-local stop` and try "
                   "again.")
        )  # fmt: skip
        super().__init__(
            _("the engine on this machine (PID {pid}) holds {model}, not {wanted}: loading "
              "{wanted} beside it would take the memory of a second model").format(
                pid=found.record.pid, model=found.record.model, wanted=wanted),
            hint.format(model=found.record.model, wanted=wanted),
        )  # fmt: skip
        self.found, self.wanted = found, wanted


def shape_before_load(ready: Ready, wishes: Wishes, plan: Plan) -> tuple[BackendInfo, Capabilities]:
    """What a model that is not loaded yet will be (`serve --load on-demand`): its name and
    context from the plan, and the capabilities its engine gives a load of `wishes.parallel`
    replies at once (as `LlamaCppBackend` sets them when it loads)."""
    info = BackendInfo(wishes.backend, ready.model, plan.placement, plan.context)
    if wishes.backend == "ollama":
        return info, OllamaBackend.capabilities
    parallel = max(1, wishes.parallel)
    capabilities = replace(LlamaCppBackend.capabilities, prefill=parallel == 1, parallel=parallel)
    return info, capabilities
