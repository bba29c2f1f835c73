"""The chat over the machine's engine when it holds another model: the app asks before
anything loads (switch the engine, or cancel; never a second copy), and a model chosen with F9
switches the engine once the user agrees that it affects the programs using it. A real serve
process on loopback, the real app under Textual's pilot."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from resident_helpers import get_json
from serve_helpers import serve_process
from tui_fixtures import fixture_history
from tui_helpers import wait_for, wait_for_model

from gptoss_local import config
from gptoss_local.backends.openai.backend import OpenAIClientBackend
from gptoss_local.cli import build_parser
from gptoss_local.commands.chat import link
from gptoss_local.launch.engine_link import EngineLink, Offer
from gptoss_local.launch.prepare import prepare
from gptoss_local.plan.wishes import Wishes, wishes_from
from gptoss_local.session.history import History
from gptoss_local.tui.app import ChatApp, make_app
from gptoss_local.tui.modals import ConfirmScreen
from gptoss_local.urls import ENGINE_PATH

__all__ = ["fixture_history"]


@pytest.fixture
def other(tiny_gguf: Path, tmp_path: Path) -> Path:
    """A second model: the tiny one under another name."""
    path = tmp_path / "other.gguf"
    shutil.copyfile(tiny_gguf, path)
    return path


def _wishes(model: Path) -> Wishes:
    args = build_parser().parse_args(["chat", "--model-path", str(model), "--context", "2048"])
    return wishes_from(args, config.load())


def _chat(history: History, model: Path) -> tuple[ChatApp, EngineLink]:
    """The app as `gptoss-local chat --model-path MODEL` builds it."""
    wishes, settings = _wishes(model), config.load()
    prepared = prepare(wishes, settings, ask_first=True)
    assert prepared.ready is not None
    engine = link(wishes, settings)
    found = engine.through(prepared.ready)
    offer = found.question if isinstance(found, Offer) else None
    ready = found.ready if isinstance(found, Offer) else found
    app = make_app(history, ready=ready, setup=prepared.preparation, engine=engine, offer=offer)
    return app, engine


@pytest.fixture
def engine_of_tiny(tiny_gguf: Path, isolated_home: Path) -> Iterator[int]:
    """A serve of the tiny model, as the machine's engine; its port."""
    with serve_process(tiny_gguf, isolated_home) as served:
        yield served.port


async def test_the_chat_offers_to_switch_the_engine_and_switches_it(
    engine_of_tiny: int, other: Path, history: History
) -> None:
    app, _engine = _chat(history, other)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), 30, "the offer")
        question = str(app.screen.query_one("Label").render())
        assert "holds tiny" in question and "Switching it to other" in question
        assert get_json(engine_of_tiny, ENGINE_PATH)["loads"] == 1  # nothing loaded yet
        await pilot.press("y")
        await wait_for_model(pilot)
        assert isinstance(app.chat_screen.host.backend, OpenAIClientBackend)  # the engine's
    state = get_json(engine_of_tiny, ENGINE_PATH)
    assert state["model"] == "other" and state["loads"] == 2
    assert not app.declined_switch


async def test_cancel_leaves_the_engine_and_loads_nothing(
    engine_of_tiny: int, other: Path, history: History
) -> None:
    app, _engine = _chat(history, other)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), 30, "the offer")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.declined_switch, 10, "the chat to end")
    assert app.chat_screen.host.backend is None  # no copy of its own either
    state = get_json(engine_of_tiny, ENGINE_PATH)
    assert state["model"] == "tiny" and state["loads"] == 1


async def test_a_model_chosen_with_f9_switches_the_engine_once_agreed(
    engine_of_tiny: int, tiny_gguf: Path, other: Path, history: History
) -> None:
    app, _engine = _chat(history, tiny_gguf)  # the engine's own model: no question
    chosen = prepare(_wishes(other), config.load()).ready  # as the set-up screen gives it
    assert chosen is not None
    async with app.run_test() as pilot:
        await wait_for_model(pilot)
        assert not isinstance(app.screen, ConfirmScreen)
        app.chat_screen.banner._chosen(chosen)  # what F9's set-up screen hands back
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), 30, "the offer")
        question = str(app.screen.query_one("Label").render())
        assert "every program that uses the engine" in question
        await pilot.press("escape")  # not now: nothing changes
        await wait_for(pilot, lambda: not isinstance(app.screen, ConfirmScreen), 10, "close")
        assert get_json(engine_of_tiny, ENGINE_PATH)["model"] == "tiny"
        app.chat_screen.banner._chosen(chosen)
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), 30, "the offer")
        await pilot.press("y")
        await wait_for(
            pilot, lambda: app.chat_screen.status.info is not None
            and app.chat_screen.status.info.model == "other", 60,
            "the other model",
        )  # fmt: skip
        assert isinstance(app.chat_screen.host.backend, OpenAIClientBackend)
    state = get_json(engine_of_tiny, ENGINE_PATH)
    assert state["model"] == "other" and state["loads"] == 2  # never a copy in the chat
