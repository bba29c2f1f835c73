"""Store progress on stderr: a rich bar with speed and ETA on a terminal, plain lines otherwise."""

from __future__ import annotations

import sys
from types import TracebackType
from typing import Any, TextIO

from gptoss_local.i18n import N_, _, translate
from gptoss_local.store.progress import Progress
from gptoss_local.units import size_text

# What each phase does to a file, "{name}" being the file's name.
DOING = {
    "check": N_("checking {name}"),
    "download": N_("downloading {name}"),
    "copy": N_("copying {name}"),
    "verify": N_("verifying {name}"),
}


def doing(phase: str, name: str) -> str:
    """'downloading gpt-oss-20b-mxfp4.gguf' (an unknown phase: 'PHASE NAME')."""
    if phase in DOING:
        return translate(DOING[phase]).format(name=name)
    return f"{phase} {name}"


class ProgressView:
    """Receives `Progress` reports and notices; use as a context manager around the work."""

    def __init__(self, quiet: bool = False, stream: TextIO | None = None) -> None:
        self.quiet = quiet
        self.stream = stream or sys.stderr
        self._bars: Any = None
        self._tasks: dict[tuple[str, str], Any] = {}
        self._steps: dict[tuple[str, str], int] = {}

    def __enter__(self) -> ProgressView:
        if not self.quiet and self.stream.isatty():
            self._bars = _rich_bars(self.stream)  # rich costs ~40 ms to import: only here
            self._bars.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._bars is not None:
            self._bars.stop()
            self._bars = None

    def notice(self, message: str) -> None:
        """A line of news (a retry, a switch of source, a copy found), above the bars."""
        if self.quiet:
            return
        if self._bars is not None:
            self._bars.console.print(message, markup=False, highlight=False)
        else:
            print(message, file=self.stream, flush=True)

    def progress(self, report: Progress) -> None:
        """Update the bar of `report`'s phase and file."""
        if self.quiet:
            return
        key = (report.phase, report.name)
        if self._bars is None:
            self._plain(key, report)
            return
        task = self._tasks.get(key)
        if task is None:
            description = doing(report.phase, report.name)
            task = self._bars.add_task(description, total=report.total, completed=report.done)
            self._tasks[key] = task
        self._bars.update(task, completed=report.done, total=report.total)

    def _plain(self, key: tuple[str, str], report: Progress) -> None:
        step = int(10 * report.done / report.total) if report.total else 10
        if self._steps.get(key) == step:
            return
        self._steps[key] = step
        line = (
            _("{doing}: {percent}% of {total}, {speed}/s")
            if report.speed
            else _("{doing}: {percent}% of {total}")
        )
        words = line.format(
            doing=doing(report.phase, report.name),
            percent=10 * step,
            total=size_text(report.total),
            speed=size_text(report.speed),
        )
        print(words, file=self.stream, flush=True)


def _rich_bars(stream: TextIO) -> Any:
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )
    from rich.progress import Progress as Bars

    return Bars(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(binary_units=True),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        console=Console(file=stream),
    )
