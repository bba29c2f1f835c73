"""`gptoss-local pull` as a user runs it: progress on stderr, the path on stdout, --quiet."""

from __future__ import annotations

import io

import pytest
from http_fixture import Fault, FileServer
from store_files import Served, models_dir

from gptoss_local import catalog
from gptoss_local.cli import main
from gptoss_local.commands.progress_view import ProgressView
from gptoss_local.store.progress import Meter, Progress


def test_pull_prints_progress_lines_and_the_path(
    http_server: FileServer, served: Served, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["pull", "one", "--source", "main"]) == 0
    out, err = capsys.readouterr()
    assert out.strip() == str(models_dir() / "tiny-one.gguf")
    assert "pulling tiny-one (3.0 MiB) into" in err
    assert "downloading tiny-one: 100% of 3.0 MiB" in err
    assert "tiny-one.gguf: downloaded from main" in err and "ready and verified" in err


def test_quiet_prints_only_the_path(
    http_server: FileServer, served: Served, capsys: pytest.CaptureFixture[str]
) -> None:
    http_server.fault("main", "tiny-one.gguf", Fault("drop", at=0.5))
    assert main(["pull", "--quiet", "one"]) == 0
    out, err = capsys.readouterr()
    assert out.strip() == str(models_dir() / "tiny-one.gguf") and err == ""


def test_without_a_model_the_planners_choice_is_pulled(
    http_server: FileServer, served: Served, capsys: pytest.CaptureFixture[str]
) -> None:
    smallest = min(catalog.load().models, key=lambda m: m.total_bytes)
    assert main(["pull"]) == 0
    err = capsys.readouterr().err
    assert f"no model named: {smallest.name} is the one planned for this machine" in err


def test_errors_exit_2_with_the_reason(
    http_server: FileServer, served: Served, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["pull", "nope"]) == 2
    assert "unknown model 'nope'" in capsys.readouterr().err
    http_server.fault("main", "tiny-one.gguf", Fault("status", status=404, times=-1))
    assert main(["pull", "one", "--source", "main"]) == 2
    assert "main: HTTP 404" in capsys.readouterr().err


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_a_rich_bar_shows_speed_and_eta() -> None:
    stream = FakeTerminal()
    clock = iter(float(t) for t in range(100))
    with ProgressView(stream=stream) as view:
        meter = Meter(
            view.progress, "download", "gpt-oss-20b", 100 << 20, clock=lambda: next(clock)
        )
        for _ in range(10):
            meter.add(5 << 20)
        view.notice("switching to mirror")
        meter.finish()
    text = stream.getvalue()
    assert "downloading gpt-oss-20b" in text and "switching to mirror" in text
    assert "MiB" in text


def test_the_meter_reports_a_windowed_speed_at_a_bounded_rate() -> None:
    reports: list[Progress] = []
    now = [0.0]
    meter = Meter(reports.append, "download", "m", 1000, clock=lambda: now[0])
    for _ in range(20):
        now[0] += 0.01
        meter.add(10)
    assert len(reports) == 2  # at most one report per 0.1 s
    now[0] += 1.0
    meter.add(0)
    meter.finish()
    assert reports[-1].done == 200 and 0 < reports[-1].speed < 1000
