"""`gptoss-local docs [list]`, `docs add PATH…`, `docs rm PATH` and `docs reindex`: the folders
the browser tool searches (settings' `docs`) and their index in the data folder."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from gptoss_local import config
from gptoss_local.commands.table import table_lines
from gptoss_local.config import Settings
from gptoss_local.errors import WishError
from gptoss_local.i18n import N_, _, ngettext, translate
from gptoss_local.library import Library, Progress, UpdateReport
from gptoss_local.library.reading import SKIP_REASONS
from gptoss_local.units import size_text

# What a skip reason is called in the listing.
SKIPPED_WORDS = {
    "binary": N_("binary"),
    "too_large": N_("too large"),
    "unreadable": N_("unreadable"),
    "outside": N_("links outside"),
}


def run_docs(args: argparse.Namespace) -> int:
    """List, add, remove or re-index the browser's folders."""
    settings = config.load()
    action = args.docs_command or "list"
    if action == "add":
        return _add(settings, args.paths)
    if action == "rm":
        return _remove(settings, args.path)
    with _opened(rebuild=action == "reindex" and args.rebuild) as library:
        if action == "reindex":
            _index(library, settings.docs)
        _list(library, settings, getattr(args, "json", False))
    return 0


def _opened(rebuild: bool) -> Library:
    """The index; with `rebuild`, emptied first (a damaged one set aside, and said where)."""
    if not rebuild:
        return Library.open()
    library, aside = Library.rebuilt()
    if aside is not None:
        print(_("the damaged index is kept as {path}").format(path=aside), file=sys.stderr)
    return library


def _add(settings: Settings, given: list[Path]) -> int:
    folders = list(settings.docs)
    for path in given:
        folder = str(path.expanduser().resolve())
        if not Path(folder).is_dir():
            raise WishError(
                _("{path} is not a folder").format(path=path),
                _("Give the folders whose files the browser should search."),
            )
        if folder in folders:
            continue
        overlap = next((f for f in folders if _nested(folder, f)), None)
        if overlap is not None:
            raise WishError(
                _("{path} overlaps {folder}, which the browser searches already").format(
                    path=folder, folder=overlap
                ),
                _("Remove one with `gptoss-local docs rm PATH` first."),
            )
        folders.append(folder)
    settings = dataclasses.replace(settings, docs=tuple(folders))
    config.save(settings)
    with Library.open() as library:
        _index(library, settings.docs)
        _list(library, settings, False)
    return 0


def _remove(settings: Settings, given: Path) -> int:
    folder = str(given.expanduser().resolve())
    named = str(given.expanduser())
    found = next((f for f in settings.docs if f in (folder, named)), None)
    if found is None:
        raise WishError(
            _("the browser does not search {path}").format(path=given),
            _("See the folders it searches with `gptoss-local docs`."),
        )
    settings = dataclasses.replace(settings, docs=tuple(f for f in settings.docs if f != found))
    config.save(settings)
    with Library.open() as library:
        library.forget(found)
    print(_("removed {path} from the browser's folders").format(path=found))
    return 0


def _nested(one: str, other: str) -> bool:
    a, b = Path(one), Path(other)
    return a.is_relative_to(b) or b.is_relative_to(a)


def _index(library: Library, folders: tuple[str, ...]) -> UpdateReport:
    """Bring the index up to date, with progress on stderr, and say what changed."""
    shown = _ProgressLine(sys.stderr)
    try:
        report = library.update(folders, shown)
    finally:
        shown.close()
    counts = _("{added:,} added, {changed:,} changed, {removed:,} removed, {unchanged:,} unchanged")
    print(
        _("indexed in {seconds:.1f} s: {counts}").format(
            seconds=report.seconds,
            counts=counts.format(
                added=report.added,
                changed=report.changed,
                removed=report.removed,
                unchanged=report.unchanged,
            ),
        ),
        file=sys.stderr,
    )
    return report


class _ProgressLine:
    """One line of progress on a terminal, rewritten at most ten times a second, shown once a
    run has lasted half a second (a quick update shows none); nothing elsewhere."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self._tty = stream.isatty()
        self._started = time.monotonic()
        self._last = 0.0
        self._shown = False

    def __call__(self, progress: Progress) -> None:
        now = time.monotonic()
        if not self._tty or now - self._started < 0.5 or now - self._last < 0.1:
            return
        self._last = now
        line = _("indexing {folder}: {done:,} / {total:,} files").format(
            folder=Path(progress.folder).name, done=progress.done, total=progress.total
        )
        self.stream.write("\r\033[K" + line)
        self.stream.flush()
        self._shown = True

    def close(self) -> None:
        if self._shown:
            self.stream.write("\r\033[K")
            self.stream.flush()


def _list(library: Library, settings: Settings, as_json: bool) -> None:
    indexed = {info.path: info for info in library.folders()}
    size = library.size_bytes()
    if as_json:
        doc: dict[str, Any] = {
            "folders": [
                {
                    "path": folder,
                    "files": indexed[folder].files if folder in indexed else 0,
                    "skipped": indexed[folder].skipped if folder in indexed else {},
                    "indexed_at": indexed[folder].indexed_at if folder in indexed else None,
                }
                for folder in settings.docs
            ],
            "index": str(library.path),
            "index_bytes": size,
        }
        print(json.dumps(doc, indent=2, ensure_ascii=False))
        return
    if not settings.docs:
        print(_("The browser searches no folders yet: add some with `gptoss-local docs add PATH`."))
        return
    rows = [[_("FOLDER"), _("FILES"), _("SKIPPED"), _("UPDATED")]]
    for folder in settings.docs:
        info = indexed.get(folder)
        if info is None:
            rows.append([folder, "-", "-", _("not indexed: run `gptoss-local docs reindex`")])
            continue
        rows.append([folder, f"{info.files:,}", _skipped(info.skipped), _when(info.indexed_at)])
    print("\n".join(table_lines(rows)))
    files = sum(info.files for info in indexed.values())
    print(
        "\n"
        + ngettext("{count:,} file indexed", "{count:,} files indexed", files).format(count=files)
        + " · "
        + _("index {size} at {path}").format(size=size_text(size), path=library.path)
    )


def _skipped(skipped: dict[str, int]) -> str:
    parts = [
        f"{skipped[r]:,} {translate(SKIPPED_WORDS[r])}" for r in SKIP_REASONS if skipped.get(r)
    ]
    return ", ".join(parts) or "0"


def _when(stamp: str | None) -> str:
    return stamp.replace("T", " ")[:16] if stamp else _("never")
