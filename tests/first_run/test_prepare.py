"""`launch.prepare`, the one way from the command line to a model ready to load that `run`,
`serve`, `bench` and `chat` share: on a described CPU-only PC with the tiny model's catalog."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from first_run_helpers import MODEL, chat_args, install_tiny, machine

from gptoss_local import config
from gptoss_local.catalog import Catalog
from gptoss_local.errors import WishError
from gptoss_local.launch import preparation
from gptoss_local.launch.prepare import prepare
from gptoss_local.plan.planner import Plan
from gptoss_local.plan.wishes import Wishes, wishes_from


@pytest.fixture(autouse=True)
def fixture_this_pc(monkeypatch: pytest.MonkeyPatch, cat: Catalog) -> None:
    """The probe finds a CPU-only PC with 64 GiB and the manifest is the tiny model's."""
    monkeypatch.setattr(preparation, "probe", lambda: machine(ram_gib=64))
    monkeypatch.setattr(preparation.catalog_mod, "load", lambda: cat)
    monkeypatch.setattr(preparation, "check_engine", lambda hardware: None)


def wishes(**given: object) -> Wishes:
    return wishes_from(chat_args(**given), config.load())


def test_the_engine_is_made_ready_and_its_warnings_told(tiny_gguf: Path) -> None:
    install_tiny(tiny_gguf)
    told: list[str] = []
    prepared = prepare(wishes(model="tiny", context=2048), config.load(), warn=told.append)
    assert prepared.ready is not None and prepared.ready.model == MODEL
    assert prepared.wishes.model == MODEL  # the alias as its name
    assert prepared.plan.model == MODEL and prepared.plan.context == 2048
    assert told == list(prepared.ready.warnings) == list(prepared.plan.warnings)
    assert prepared.preparation.catalog.model(MODEL).name == MODEL


def test_tune_sees_the_plan_and_its_wishes_make_the_engine_ready(tiny_gguf: Path) -> None:
    install_tiny(tiny_gguf)
    seen: list[Plan] = []

    def tune(wishes: Wishes, plan: Plan) -> Wishes:
        seen.append(plan)
        return replace(wishes, parallel=3)

    prepared = prepare(wishes(model="tiny"), config.load(), tune=tune)
    assert seen == [prepared.plan] and prepared.wishes.parallel == 3
    assert prepared.ready is not None


def test_planned_only_tells_the_plans_warnings_before_anything_is_looked_up() -> None:
    told: list[str] = []
    # Not downloaded: making the engine ready would refuse, planning alone does not.
    prepared = prepare(wishes(model="tiny"), config.load(), warn=told.append, make_ready=False)
    assert prepared.ready is None and prepared.plan.model == MODEL
    assert told == list(prepared.plan.warnings)


def test_the_chat_asks_first_when_there_are_questions(tiny_gguf: Path) -> None:
    first = prepare(wishes(), config.load(), ask_first=True)
    assert first.ready is None and first.preparation.first_run  # the first-run screen asks
    assert first.plan.model == MODEL
    install_tiny(tiny_gguf)
    given = wishes(model="tiny", effort="low", backend="llamacpp")
    ready = prepare(given, config.load(), ask_first=True).ready  # nothing left to ask
    assert ready is not None and ready.model == MODEL


def test_a_model_that_is_not_downloaded_is_refused_when_made_ready() -> None:
    with pytest.raises(WishError, match="is not downloaded"):
        prepare(wishes(model="tiny"), config.load(), warn=lambda _text: None)
