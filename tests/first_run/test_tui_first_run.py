"""The first run in the app: the screen with this PC, the plan and the weights; downloading
from the loopback server with progress, cancel and resume; loading with progress; failures."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from first_run_helpers import FILE, MODEL, install_tiny, serve_tiny, setup_for
from http_fixture import Fault, FileServer
from store_files import gguf_file
from textual.pilot import Pilot
from textual.widgets import Button, Select, Static
from tui_helpers import (
    AppOn,
    ScriptedBackend,
    assert_snapshot,
    reply,
    screen_lines,
    wait_for,
)

from gptoss_local import config, paths
from gptoss_local.backends.base import BackendError
from gptoss_local.catalog import Catalog
from gptoss_local.store.layout import file_paths
from gptoss_local.tui.app import ChatApp
from gptoss_local.tui.first_run import FirstRunScreen
from gptoss_local.tui.loading import LoadingBanner
from gptoss_local.tui.status import StatusBar
from gptoss_local.tui.widgets import ScrollWhenNeeded


def screen_text(app: ChatApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


def on_first_run(app: ChatApp) -> bool:
    return isinstance(app.screen, FirstRunScreen)


@asynccontextmanager
async def asking(app: ChatApp, size: tuple[int, int] = (100, 50)) -> AsyncIterator[Pilot]:
    """The app running in a terminal of `size`, once it shows the first-run screen."""
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: on_first_run(app), what="the first-run screen")
        yield pilot


async def test_the_first_run_shows_the_pc_the_plan_and_what_a_download_needs(
    app_on: AppOn, cat: Catalog
) -> None:
    app = app_on(setup=setup_for(cat))
    async with asking(app):
        screen = app.screen
        hardware = "\n".join(str(s.render()) for s in screen.query(".facts"))
        assert "no NVIDIA driver (test)" in hardware and "RAM" in hardware
        plan = screen_text(app, "#plan")
        assert MODEL in plan and "CPU only" in plan and "4,096 tokens" in plan and "why" in plan
        weights = screen_text(app, "#weights")
        assert "168.6 KiB, to download" in weights and "free on that disk" in weights
        assert "from main, then mirror" in weights
        assert "Download 168.6 KiB and start" in str(screen.query_one("#start", Button).label)
        assert screen.query_one("#context", Select).disabled  # --context was given
        assert not screen.query_one("#effort", Select).disabled


async def test_snapshot_first_run(
    app_on: AppOn, cat: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    from gptoss_local.launch import preparation

    home = Path("/tmp/gptoss-local-snapshot-home")  # the models folder is on the screen
    shutil.rmtree(home, ignore_errors=True)
    monkeypatch.setenv("GPTOSS_LOCAL_HOME", str(home))
    monkeypatch.setattr(preparation, "free_bytes", lambda folder: 812 << 30)
    app = app_on(setup=setup_for(cat, context=None))
    async with asking(app, (100, 52)) as pilot:
        await assert_snapshot(pilot, "first_run")


async def test_download_load_and_chat_then_the_choice_is_remembered(
    app_on: AppOn, cat: Catalog, tiny_gguf: Path
) -> None:
    app = app_on(setup=setup_for(cat))
    async with asking(app) as pilot:
        app.screen.query_one("#effort", Select).value = "high"
        await pilot.pause()
        await pilot.click("#start")
        await wait_for(pilot, lambda: not on_first_run(app), 30, "the download")
        await wait_for(pilot, lambda: app.query_one(StatusBar).info is not None, 60, "the load")
        assert not app.query_one(LoadingBanner).display
        assert app.chat_screen.state.effort == "high" and "effort high" in str(
            app.query_one(StatusBar).render()
        )
    assert (paths.models_dir() / FILE).read_bytes() == tiny_gguf.read_bytes()
    saved = config.load()
    assert (saved.model, saved.effort, saved.context) == (MODEL, "high", 4096)
    assert not setup_for(cat, context=None).needs_screen()  # the next run goes straight in


async def test_cancel_keeps_the_partial_and_start_resumes_it(
    tmp_path: Path, app_on: AppOn, http_server: FileServer
) -> None:
    big = tmp_path / "big.gguf"  # not a loadable model: the load then fails, visibly
    big.write_bytes(gguf_file(8 << 20, seed=4))
    cat = serve_tiny(http_server, big, tmp_path / "manifest.toml")
    http_server.fault("main", FILE, Fault("throttle", rate=2 << 20))
    part = file_paths(FILE, paths.models_dir()).part
    app = app_on(setup=setup_for(cat))
    async with asking(app) as pilot:
        await pilot.click("#start")
        line = lambda: screen_text(app, "#download-line")  # noqa: E731
        await wait_for(pilot, lambda: "MiB of" in line(), 10, "download progress")
        assert app.screen.query_one("#cancel", Button).display
        await pilot.press("escape")
        await wait_for(pilot, lambda: "cancelled" in screen_text(app, "#problem"), 10, "cancel")
        kept = part.stat().st_size
        assert 0 < kept < big.stat().st_size
        assert "is here from an earlier download: it resumes" in screen_text(app, "#weights")
        start = app.screen.query_one("#start", Button)
        await wait_for(pilot, lambda: start.display and start.region.width > 0, 5, "Start")
        await pilot.pause()  # laid out again before the click lands
        await pilot.click("#start")
        await wait_for(pilot, lambda: not on_first_run(app), 30, "the resumed download")
        banner = app.query_one(LoadingBanner)
        await wait_for(pilot, lambda: banner.has_class("-failed"), 30, "the load failure")
        assert "F9 chooses another model" in str(banner.query_one("#load-what").render())
    assert http_server.hits[-1].start == kept  # the second request resumed


async def test_quit_on_the_first_run_screen_leaves_the_app(app_on: AppOn, cat: Catalog) -> None:
    app = app_on(setup=setup_for(cat))
    async with asking(app) as pilot:
        await pilot.click("#quit")
        await wait_for(pilot, lambda: not app.is_running, 5, "the app to exit")
    assert not paths.settings_file().exists()  # nothing was chosen


async def test_changing_a_choice_plans_again(app_on: AppOn, cat: Catalog) -> None:
    app = app_on(setup=setup_for(cat, context=None))
    async with asking(app) as pilot:
        app.screen.query_one("#context", Select).value = 8192
        await wait_for(pilot, lambda: "8,192 tokens" in screen_text(app, "#plan"), 5, "replan")
        app.screen.query_one("#backend", Select).value = "ollama"
        await wait_for(pilot, lambda: "Ollama keeps its own copy" in screen_text(app, "#weights"),
                       5, "the Ollama note")  # fmt: skip
        assert str(app.screen.query_one("#start", Button).label) == "Start"


async def test_loading_shows_progress_then_the_banner_goes(app_on: AppOn) -> None:
    gate = threading.Event()
    backend = ScriptedBackend(reply("r", "hi"))

    def factory(progress: object) -> ScriptedBackend:
        progress(0.4, "loading the weights")  # type: ignore[operator]
        gate.wait(10)
        return backend

    app = app_on(factory)
    async with app.run_test() as pilot:
        banner = app.query_one(LoadingBanner)
        what = lambda: str(banner.query_one("#load-what").render())  # noqa: E731
        await wait_for(pilot, lambda: what() == "loading the weights", 5, "load progress")
        assert banner.display and banner.query_one("#load-bar").percentage == pytest.approx(0.4)
        gate.set()
        await wait_for(pilot, lambda: not banner.display, 5, "the banner to go")


async def test_a_failed_load_stays_on_screen_with_what_to_do(app_on: AppOn) -> None:
    def factory(_progress: object) -> ScriptedBackend:
        raise BackendError("not enough memory", hint="Use --cpu-moe 4.", kind="out_of_memory")

    app = app_on(factory)
    async with app.run_test() as pilot:
        banner = app.query_one(LoadingBanner)
        await wait_for(pilot, lambda: banner.has_class("-failed"), 5, "the failure")
        text = str(banner.query_one("#load-what").render())
        assert "not enough memory" in text and "--cpu-moe 4" in text
        assert "the model is not loaded" in str(app.query_one(StatusBar).render())
        assert "sending a message tries again" in text


async def test_the_keyboard_reaches_every_choice(app_on: AppOn, cat: Catalog) -> None:
    app = app_on(setup=setup_for(cat))
    async with asking(app) as pilot:
        assert app.focused is not None and app.focused.id == "start"
        await pilot.press("shift+tab")
        assert app.focused is not None and app.focused.id == "effort"
        await pilot.press("enter", "down", "enter")  # open the list, one down, choose
        await wait_for(pilot, lambda: app.screen.wishes.effort == "high", 5, "effort high")
        await pilot.press("tab", "tab")
        assert app.focused is not None and app.focused.id == "quit"
        kinds = {type(widget).__name__ for widget in app.screen.focus_chain}
        assert "ScrollWhenNeeded" not in kinds  # the screen fits: no Tab stop on its container


async def test_a_screen_too_small_can_be_scrolled_from_the_keyboard(
    app_on: AppOn, cat: Catalog
) -> None:
    app = app_on(setup=setup_for(cat))
    async with asking(app, (80, 16)):
        kinds = {type(widget).__name__ for widget in app.screen.focus_chain}
        assert "ScrollWhenNeeded" in kinds


async def test_f9_chooses_again_and_back_keeps_the_model(
    app_on: AppOn, cat: Catalog, tiny_gguf: Path
) -> None:
    install_tiny(tiny_gguf)
    setup = setup_for(cat)
    choices = setup.initial()
    ready = setup.ready(choices, setup.plan(choices))
    app = app_on(ready=ready, setup=setup)
    async with app.run_test(size=(100, 50)) as pilot:
        status = app.query_one(StatusBar)
        await wait_for(pilot, lambda: status.info is not None, 60, "the first load")
        first = app.chat_screen.host.backend
        await pilot.press("f9")
        await wait_for(pilot, lambda: on_first_run(app), what="the set-up screen")
        assert str(app.screen.query_one("#quit", Button).label) == "Back"
        await pilot.click("#quit")
        await wait_for(pilot, lambda: not on_first_run(app), what="back to the chat")
        assert app.chat_screen.host.backend is first and status.info is not None
        await pilot.press("f9")
        await wait_for(pilot, lambda: on_first_run(app), what="the set-up screen")
        app.screen.query_one("#effort", Select).value = "high"
        await pilot.pause()
        await pilot.click("#start")
        host = app.chat_screen.host
        await wait_for(pilot, lambda: status.info is not None and host.backend is not first, 60,
                       "the model loaded again")  # fmt: skip
        assert app.chat_screen.generation.effort == "high" and config.load().effort == "high"


async def test_at_80_by_24_the_buttons_are_in_view_below_the_scrolling_facts(
    app_on: AppOn, cat: Catalog
) -> None:
    app = app_on(setup=setup_for(cat))
    async with asking(app, (80, 24)) as pilot:
        await pilot.pause()
        facts = app.screen.query_one(ScrollWhenNeeded)
        assert facts.max_scroll_y > 0 and facts.scroll_y == 0  # it scrolls, from the top
        assert "Welcome to gptoss-local" in screen_lines(app)[1]
        buttons = [b for b in app.screen.query(".buttons Button").results(Button) if b.display]
        assert [b.id for b in buttons] == ["start", "quit"]
        for button in buttons:
            assert app.screen.region.contains_region(button.region), button.id
        await pilot.click("#start")  # where the pointer finds it: the download starts
        await wait_for(pilot, lambda: not on_first_run(app), 30, "the download")


async def test_f9_with_a_model_path_changes_the_context_and_loads_the_file_again(
    app_on: AppOn, cat: Catalog, tiny_gguf: Path
) -> None:
    setup = setup_for(cat, model_path=tiny_gguf, context=2048)
    choices = setup.initial()
    app = app_on(ready=setup.ready(choices, setup.plan(choices)), setup=setup)
    async with app.run_test(size=(80, 24)) as pilot:
        status, host = app.query_one(StatusBar), app.chat_screen.host
        await wait_for(pilot, lambda: status.info is not None, 60, "the first load")
        first = host.backend
        assert status.info is not None and status.info.context_size == 2048
        await pilot.press("f9")
        await wait_for(pilot, lambda: on_first_run(app), what="the set-up screen")
        screen = app.screen
        assert f"Change the context or effort of {tiny_gguf.name}" in screen_lines(app)[1]
        model = screen.query_one("#model", Select)
        assert model.disabled and model.value == "auto"
        assert str(model.query_one("#label", Static).render()) == tiny_gguf.name
        assert screen.query_one("#backend", Select).disabled  # a file runs in llama.cpp
        context = screen.query_one("#context", Select)
        assert not context.disabled and context.value == 2048  # --context is where it starts
        context.value = 4096
        await wait_for(pilot, lambda: "4,096 tokens" in screen_text(app, "#plan"), 5, "replan")
        await pilot.click("#start")
        await wait_for(pilot, lambda: status.info is not None and host.backend is not first, 60,
                       "the file loaded again")  # fmt: skip
        assert status.info is not None and status.info.context_size == 4096
    assert not paths.settings_file().exists()  # a file's run leaves the settings alone
