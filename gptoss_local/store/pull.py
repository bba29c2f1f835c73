"""`pull`: get every file of a model into the models folder, verified.

For each file, in order: keep the finished file if its sha256 is right; else reuse a verified copy
from another tool's cache; else download it (resumable, retried, from the sources in order). Then
the model is checked as a GGUF before it is reported ready.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from gptoss_local import paths
from gptoss_local.catalog import Catalog, ModelFile, ModelSpec, Source
from gptoss_local.i18n import _, active_language
from gptoss_local.store.adopt import same_device
from gptoss_local.store.download import RetryPolicy
from gptoss_local.store.errors import DiskFullError, OfflineError, PullCancelled, StoreError
from gptoss_local.store.layout import FilePaths, file_paths
from gptoss_local.store.lock import FileLock, holder_text
from gptoss_local.store.offline import offline_reason
from gptoss_local.store.progress import (
    Meter,
    Notice,
    Progress,
    ProgressFn,
    ignore_notice,
    ignore_progress,
)
from gptoss_local.store.pull_file import (
    FileOutcome,
    FileTask,
    download_file,
    keep_existing,
    offline_message,
    reuse_copy,
)
from gptoss_local.store.records import recorded_sha256, write_record
from gptoss_local.store.reuse import find_copies
from gptoss_local.store.verify import gguf_problem
from gptoss_local.units import size_text as st

DISK_MARGIN = 1 << 30  # room to leave free: logs, history, the OS


@dataclass(frozen=True)
class PullOptions:
    """How to pull.

    Attributes:
        source: Use only this source (`--source`); None tries them all.
        preferred: The source to try first (the settings file's `source`).
        offline: `--offline` was given (the offline variables are honoured as well).
        reuse: Look for copies in other tools' caches first.
        policy: Retries, backoff and timeouts of each source.
        lock_timeout: Seconds to wait for another pull of the same file; None waits, 0 refuses.
        lock_poll: Seconds between looks at a busy lock.
        disk_margin: Bytes to leave free beyond the download.
        env: Environment for HF_ENDPOINT, the offline variables and cache locations.
        cancel: Set it to stop the pull at its next progress report (PullCancelled).
    """

    source: str | None = None
    preferred: str | None = None
    offline: bool = False
    reuse: bool = True
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    lock_timeout: float | None = None
    lock_poll: float = 0.5
    disk_margin: int = DISK_MARGIN
    env: Mapping[str, str] | None = None
    cancel: threading.Event | None = None


@dataclass(frozen=True)
class PullResult:
    """The model, the path to hand to llama.cpp, and what happened to each file."""

    spec: ModelSpec
    path: Path
    files: tuple[FileOutcome, ...]


def regional_first(language: str, preferred: str | None) -> tuple[str, ...]:
    """The sources a user's language puts first when they chose none but the default: with
    Chinese, the mirrors reachable from China (Hugging Face itself often is not)."""
    if preferred not in (None, "", DEFAULT_SOURCE):
        return ()
    return REGIONAL_SOURCES.get(language.split("_")[0].lower(), ())


def ordered_sources(
    catalog: Catalog, only: str | None, preferred: str | None, language: str = ""
) -> tuple[Source, ...]:
    """The sources to try, in order: `only` alone, else those `language` puts first
    (`regional_first`), then `preferred`, then the manifest's order; every source is tried
    before a download fails."""
    if only:
        return (catalog.source(only),)
    names = [*regional_first(language, preferred), *([preferred] if preferred else [])]
    known = {s.name: s for s in catalog.sources}
    first = [known[name] for name in dict.fromkeys(names) if name in known]
    return (*first, *(s for s in catalog.sources if s not in first))


# The settings file's default source, and the sources a language puts before it.
DEFAULT_SOURCE = "huggingface"
REGIONAL_SOURCES = {"zh": ("modelscope", "hf-mirror")}


def pull_model(
    spec: ModelSpec,
    catalog: Catalog,
    options: PullOptions | None = None,
    progress: ProgressFn = ignore_progress,
    notice: Notice = ignore_notice,
    folder: Path | None = None,
) -> PullResult:
    """Make every file of `spec` present and verified in `folder` (default: the models folder).

    Raises:
        OfflineError: offline mode is on and a file is missing (the message says where to put it).
        DiskFullError: not enough free space to start, or the disk filled up (partial kept).
        LockedError: another process holds a file's lock past `options.lock_timeout`.
        StoreError: every source failed for a file; each source's reason is listed.
        GgufError: the verified files are not a model llama.cpp can load.
        PullCancelled: `options.cancel` was set; what was downloaded is kept.
    """
    options = options or PullOptions()
    progress = _stoppable(progress, options.cancel, spec.name)
    folder = paths.models_dir() if folder is None else folder
    fps = [file_paths(f.name, folder) for f in spec.files]
    sources = ordered_sources(catalog, options.source, options.preferred, active_language())
    offline = offline_reason(options.offline, options.env)
    if offline:
        _refuse_if_missing(spec, fps, options, folder, offline)
    _check_disk(spec, fps, options, folder)
    overall = Meter(progress, "download", spec.name, spec.total_bytes, bytes_on_disk(spec, folder))
    outcomes = []
    try:
        paths.ensure_dir(folder)
        for file, fp in zip(spec.files, fps, strict=True):
            task = FileTask(spec, file, fp, progress, notice, overall, options.env)
            outcomes.append(_pull_one(task, sources, options, offline))
    except OSError as exc:  # permissions, a vanished drive: say where, not a traceback
        where = exc.filename or folder
        raise StoreError(
            _("cannot write {where}: {error}").format(where=where, error=exc.strerror or exc)
        ) from None
    overall.finish()
    entry = fps[0].final
    if entry.suffix == ".gguf" and (refused := gguf_problem(entry)):
        write_record(fps[0], spec.files[0].sha256, str(refused))  # so `models` says corrupt
        raise refused
    return PullResult(spec, entry, tuple(outcomes))


def _stoppable(progress: ProgressFn, cancel: threading.Event | None, name: str) -> ProgressFn:
    """`progress`, raising PullCancelled once `cancel` is set (reports come every ~0.1 s)."""
    if cancel is None:
        return progress

    def report(p: Progress) -> None:
        if cancel.is_set():
            raise PullCancelled(
                f"the download of {name} was cancelled; what was fetched is kept and the "
                "next download resumes from there"
            )
        progress(p)

    return report


def _pull_one(
    task: FileTask, sources: tuple[Source, ...], options: PullOptions, offline: str | None
) -> FileOutcome:
    def waiting(pid: int) -> None:
        task.notice(
            _("{who} is already pulling {name}; waiting for it to finish").format(
                who=holder_text(pid), name=task.file.name
            )
        )

    with FileLock(task.fp.lock).acquire(options.lock_timeout, options.lock_poll, waiting):
        if keep_existing(task):
            return FileOutcome(task.file.name, "present", "")
        reused = reuse_copy(task) if options.reuse else None
        return reused or download_file(task, sources, options.policy, offline)


def bytes_on_disk(spec: ModelSpec, folder: Path) -> int:
    """Bytes of the model already in `folder`: finished files of the right size and partials."""
    total = 0
    for file in spec.files:
        fp = file_paths(file.name, folder)
        final = _size(fp.final)
        total += file.bytes if final == file.bytes else min(_size(fp.part) or 0, file.bytes)
    return total


def _remaining(spec: ModelSpec, file: ModelFile, fp: FilePaths, options: PullOptions) -> int:
    """Bytes still to write for `file`; a copy on the same drive is hard-linked, costing none."""

    if _size(fp.final) == file.bytes and recorded_sha256(fp) in (None, file.sha256):
        return 0  # good, or not hashed yet (a damaged file is kept until its replacement is in)
    if options.reuse:
        target = paths.existing_ancestor(fp.final.parent)
        if any(same_device(c.path, target) for c in find_copies(spec, file, options.env)):
            return 0
    return max(0, file.bytes - (_size(fp.part) or 0))


def _size(path: Path) -> int | None:
    try:
        return path.stat().st_size
    except OSError:  # missing, or a path through a file: writing will say what is wrong
        return None


def free_bytes(folder: Path) -> int:
    """Free bytes on the drive that holds (or will hold) `folder`."""
    return shutil.disk_usage(paths.existing_ancestor(folder)).free


def _check_disk(spec: ModelSpec, fps: list[FilePaths], options: PullOptions, folder: Path) -> None:
    pairs = zip(spec.files, fps, strict=True)
    need = sum(_remaining(spec, f, fp, options) for f, fp in pairs)
    if not need:
        return
    free = free_bytes(folder)
    if need + options.disk_margin > free:
        raise DiskFullError(
            _(
                "not enough free disk space for {name}: it needs {need} more ({need_bytes:,} "
                "bytes) plus {margin} to spare, and {folder} has {free} free "
                "({free_bytes:,} bytes). Free up {missing}, or set GPTOSS_LOCAL_HOME to a folder "
                "on a drive with more room."
            ).format(
                name=spec.name,
                need=st(need),
                need_bytes=need,
                margin=st(options.disk_margin),
                folder=paths.existing_ancestor(folder),
                free=st(free),
                free_bytes=free,
                missing=st(need + options.disk_margin - free),
            )
        )


def _refuse_if_missing(
    spec: ModelSpec, fps: list[FilePaths], options: PullOptions, folder: Path, reason: str
) -> None:
    """Offline: fail at once, naming every file that is neither here nor in another cache.

    A file that is here but damaged is not missing: its own check says what is wrong with it.
    """
    missing = [
        f
        for f, fp in zip(spec.files, fps, strict=True)
        if _size(fp.final) is None and not (options.reuse and find_copies(spec, f, options.env))
    ]
    if missing:
        raise OfflineError(offline_message(missing, folder, reason))
