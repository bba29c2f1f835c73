"""One manifest file into the models folder: keep it, reuse a copy, or download it."""

from __future__ import annotations

import os
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from gptoss_local.catalog import ModelFile, ModelSpec, Source
from gptoss_local.i18n import _
from gptoss_local.store.adopt import adopt
from gptoss_local.store.download import Job, RetryPolicy, fetch
from gptoss_local.store.errors import NoNetworkError, OfflineError, SourceError, StoreError
from gptoss_local.store.hashing import hash_file, sha256_file
from gptoss_local.store.http_fetch import build_opener
from gptoss_local.store.layout import FilePaths
from gptoss_local.store.progress import Meter, Notice, ProgressFn
from gptoss_local.store.records import recorded_sha256, write_record
from gptoss_local.store.reuse import find_copies
from gptoss_local.store.sink import HashingSink
from gptoss_local.units import size_text


@dataclass(frozen=True)
class FileOutcome:
    """What happened to one file: "present", "linked", "copied" or "downloaded", and from where."""

    name: str
    how: str
    source: str


@dataclass
class FileTask:
    """Everything needed to get one file in place."""

    spec: ModelSpec
    file: ModelFile
    fp: FilePaths
    progress: ProgressFn
    notice: Notice
    overall: Meter  # bytes on disk over all files of the model
    env: Mapping[str, str] | None = None
    damaged: str | None = None  # what is wrong with the finished file, kept until replaced


def keep_existing(task: FileTask) -> bool:
    """True when the finished file is here with the manifest's sha256.

    A wrong one is left where it is: it is replaced only once a verified copy is ready (the
    download's `os.replace`), so a pull that fails, or cannot run offline, loses nothing.
    """
    fp, file = task.fp, task.file
    if not fp.final.is_file():
        return False
    size = fp.final.stat().st_size
    sha = recorded_sha256(fp) if size == file.bytes else None
    if sha is None and size == file.bytes:
        task.notice(_("checking {name}, found in the models folder").format(name=file.name))
        sha = sha256_file(fp.final, Meter(task.progress, "verify", file.name, file.bytes))
        write_record(fp, sha)
    if sha == file.sha256:
        _drop_leftover_part(task, counted=False)
        return True
    task.damaged = damage_text(fp, size, file)
    if size == file.bytes:
        task.overall.set(task.overall.done - size)  # counted as done before it was hashed
    return False


def damage_text(fp: FilePaths, size: int, file: ModelFile) -> str:
    """What is wrong with the finished file `fp.final` of `size` bytes."""
    if size != file.bytes:
        return _("{final} is damaged: it is {size:,} bytes, not {bytes:,}").format(
            final=fp.final, size=size, bytes=file.bytes
        )
    return _("{final} is damaged: its sha256 is not the manifest's {sha256}").format(
        final=fp.final, sha256=file.sha256
    )


def _drop_leftover_part(task: FileTask, counted: bool) -> None:
    """A partial download left beside a finished file is no longer needed."""
    try:
        size = task.fp.part.stat().st_size
    except FileNotFoundError:
        return
    task.fp.part.unlink()
    if counted:  # the overall count held the partial's bytes, not the finished file's
        task.overall.set(task.overall.done - min(size, task.file.bytes))


def reuse_copy(task: FileTask) -> FileOutcome | None:
    """Link or copy a verified copy found in another tool's cache, if there is one."""
    for candidate in find_copies(task.spec, task.file, task.env):
        task.notice(
            _("found {name} in {where} ({path}); checking it").format(
                name=task.file.name, where=candidate.where, path=candidate.path
            )
        )
        how = adopt(candidate.path, task.file, task.fp, task.progress)
        if how:
            _drop_leftover_part(task, counted=True)
            task.overall.add(task.file.bytes)
            return FileOutcome(task.file.name, how, candidate.where)
        task.notice(
            _("{path} does not match the manifest's sha256; not using it").format(
                path=candidate.path
            )
        )
    return None


def download_file(
    task: FileTask, sources: tuple[Source, ...], policy: RetryPolicy, offline: str | None
) -> FileOutcome:
    """Download from the sources in order, resuming the partial file; verify; move into place.

    Raises:
        OfflineError: offline mode is on.
        StoreError: every source failed (each one's reason is listed), or writing failed.
    """
    if offline:
        if task.damaged:
            raise OfflineError(damaged_offline_message(task, offline))
        raise OfflineError(offline_message([task.file], task.fp.final.parent, offline))
    if task.damaged:
        task.notice(
            _("{damaged}; downloading a good copy (it stays until one is verified)").format(
                damaged=task.damaged
            )
        )
    sink = _open_partial(task, policy.chunk)
    magic = b"GGUF" if task.file.name.endswith(".gguf") else None
    job = Job(task.file, sink, task.overall, task.notice, magic=magic)
    if sink.size:
        job.served_by.append(_("an earlier, interrupted download"))
    opener = build_opener()
    failures: list[SourceError] = []
    try:
        for source in sources:
            if failures:
                task.notice(
                    _("{failure}; switching to {name}").format(
                        failure=failures[-1], name=source.name
                    )
                )
            outcome = _from_source(task, job, source, policy, opener, failures)
            if outcome:
                return outcome
    finally:
        sink.close()
        if task.fp.part.exists() and task.fp.part.stat().st_size == 0:
            task.fp.part.unlink()
    if failures and all(f.unresolved for f in failures):
        raise NoNetworkError(no_network_message(task, sources))
    reasons = "\n".join(f"  - {f}" for f in failures)
    kept = "\n" + _("{damaged}; it was left in place.").format(damaged=task.damaged)
    kept = kept if task.damaged else ""
    raise StoreError(
        _("could not download {name} from any source:\n{reasons}{kept}").format(
            name=task.file.name, reasons=reasons, kept=kept
        )
    )


def _from_source(
    task: FileTask,
    job: Job,
    source: Source,
    policy: RetryPolicy,
    opener: urllib.request.OpenerDirector,
    failures: list[SourceError],
) -> FileOutcome | None:
    try:
        fetch(job, source.url_for(task.spec, task.file, task.env), source.name, policy, opener)
    except SourceError as exc:
        failures.append(exc)
        return None
    actual = job.sink.hexdigest()
    if actual == task.file.sha256:
        job.sink.finish()
        os.replace(task.fp.part, task.fp.final)
        write_record(task.fp, actual)
        return FileOutcome(task.file.name, "downloaded", source.name)
    *earlier, last = job.served_by or [source.name]
    served = (
        _("{items} and {last}").format(items=", ".join(earlier), last=last) if earlier else last
    )
    failures.append(
        SourceError(
            source.name,
            _(
                "{name} as served by {served} has sha256 {actual}, not the manifest's "
                "{sha256}; the partial download was deleted"
            ).format(name=task.file.name, served=served, actual=actual, sha256=task.file.sha256),
        )
    )
    job.restart()
    return None


def _open_partial(task: FileTask, chunk: int) -> HashingSink:
    """The partial download, with the bytes already there hashed again (they may be damaged)."""
    sink = HashingSink(task.fp.part, task.file.bytes, chunk=chunk)
    try:
        if sink.size > task.file.bytes:
            task.notice(
                _("{part} is longer than the file should be; starting over").format(
                    part=task.fp.part
                )
            )
            task.overall.set(task.overall.done - task.file.bytes)  # counted up to the size
            sink.restart()
        elif sink.size:
            have = size_text(sink.size)
            task.notice(
                _("resuming {name}: checking the {have} already here").format(
                    name=task.file.name, have=have
                )
            )
            meter = Meter(task.progress, "check", task.file.name, sink.size)
            sink.set_hasher(hash_file(task.fp.part, meter, limit=sink.size))
    except BaseException:
        sink.close()
        raise
    return sink


def offline_message(files: list[ModelFile], folder: os.PathLike[str], reason: str) -> str:
    """Offline mode's refusal: which files are missing and where to put them."""
    listed = "\n".join(f"  - {f.name} ({f.bytes:,} bytes, sha256 {f.sha256})" for f in files)
    return _(
        "offline mode is on ({reason}), so nothing is downloaded. "
        "Missing:\n{listed}\nCopy the file(s) into {folder} (or run "
        "`gptoss-local import FILE`), or run the pull without offline mode."
    ).format(reason=reason, listed=listed, folder=folder)


def damaged_offline_message(task: FileTask, reason: str) -> str:
    """Offline mode's refusal to replace a damaged file: what is wrong and the ways to fix it."""
    f = task.file
    return _(
        "{damaged}. Offline mode is on ({reason}), so no good copy is "
        "downloaded and nothing was deleted. Fix it by bringing {name} "
        "({bytes:,} bytes, sha256 {sha256}) from another PC with `gptoss-local "
        "import FILE`, or run `gptoss-local pull {name2}` without offline mode."
    ).format(
        damaged=task.damaged,
        reason=reason,
        name=f.name,
        bytes=f.bytes,
        sha256=f.sha256,
        name2=task.spec.name,
    )


def no_network_message(task: FileTask, sources: tuple[Source, ...]) -> str:
    """No source could even be looked up: how to bring the files from a PC that is online."""
    spec, folder = task.spec, task.fp.final.parent
    needed = [f for f in spec.files if f == task.file or _size(folder / f.name) != f.bytes]
    hosts = ", ".join(dict.fromkeys(_host(s.url_for(spec, task.file, task.env)) for s in sources))
    listed = "\n".join(
        f"  - {f.name} ({f.bytes:,} bytes, sha256 {f.sha256})\n"
        f"    {sources[0].url_for(spec, f, task.env)}"
        for f in needed
    )
    return _(
        "cannot download {name}: no download source could be reached ({hosts}: "
        "the host names cannot be resolved), so this PC seems to have no "
        "internet connection.\nOn a PC that has one, "
        "download:\n{listed}\nbring the file(s) here (a USB drive will do) and "
        "run `gptoss-local import FILE` for each: it checks the file and puts "
        "it in place. Or connect this PC and try again."
    ).format(name=spec.name, hosts=hosts, listed=listed)


def _size(path: Path) -> int | None:
    try:
        return path.stat().st_size
    except OSError:
        return None


def _host(url: str) -> str:
    from urllib.parse import urlsplit

    try:
        return urlsplit(url).hostname or url
    except ValueError:
        return url
