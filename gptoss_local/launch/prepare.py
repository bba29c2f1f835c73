"""The one way from the command line to a model ready to load, for `run`, `serve`, `bench` and
`chat`: probe this PC, plan, make the engine ready, and pass the plan's warnings on."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gptoss_local import config
from gptoss_local.launch.engines import Ready
from gptoss_local.launch.preparation import Preparation
from gptoss_local.plan.planner import Plan
from gptoss_local.plan.wishes import Wishes

Warn = Callable[[str], None]
Tune = Callable[[Wishes, Plan], Wishes]


@dataclass(frozen=True)
class Prepared:
    """What `prepare` settled.

    Attributes:
        preparation: This PC, the catalog and the settings (the chat's first-run screen and F9
            start from it).
        wishes: The wishes planned for, a model alias turned into its name.
        plan: The planner's answer (before any question is asked).
        ready: How to open the engine and generate; None when the chat asks first, or when the
            caller loads the planned model itself (`bench`).
    """

    preparation: Preparation
    wishes: Wishes
    plan: Plan
    ready: Ready | None = None


def prepare(
    wishes: Wishes,
    settings: config.Settings,
    *,
    warn: Warn | None = None,
    tune: Tune | None = None,
    make_ready: bool = True,
    ask_first: bool = False,
) -> Prepared:
    """Probe this PC, plan, make the engine ready, and tell `warn` what the plan warns about.

    Args:
        wishes: The command line over the settings file (`plan.wishes.wishes_from`).
        settings: The settings file read.
        warn: Hears each warning (None: the caller shows them, as the chat does): the engine's
            once it is ready (none for a server elsewhere), else the plan's.
        tune: Changes the wishes once the plan is known (`serve`: replies decoded together when
            the model runs on a GPU).
        make_ready: False: plan only; the caller loads the planned model itself (`bench`).
        ask_first: Stop after the plan when there are questions to ask (the chat's first-run
            screen asks them, and makes the engine ready itself).

    Raises:
        UserError: An unknown model, a file llama.cpp cannot load, a model not downloaded, a
            server address refused (from `Preparation.plan` and the engine's `ready`).
    """
    preparation = Preparation.probe(wishes, settings)
    wishes = preparation.initial()
    plan = preparation.plan(wishes)  # reads --model-path's header: a bad file fails here
    if ask_first and preparation.needs_screen():
        return Prepared(preparation, wishes, plan)
    if tune is not None:
        wishes = tune(wishes, plan)
    ready = preparation.ready(wishes, plan) if make_ready else None
    if warn is not None:
        for warning in ready.warnings if ready is not None else plan.warnings:
            warn(warning)
    return Prepared(preparation, wishes, plan, ready)
