"""Download one file from one source into its partial file: resume, retry, restart on 200.

The partial (`HashingSink`) is shared between sources, so when one source gives up the next one
resumes where it stopped. Verifying the finished bytes is the caller's job (`pull.py`).
"""

from __future__ import annotations

import http.client
import re
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field

from gptoss_local.catalog import ModelFile
from gptoss_local.i18n import _
from gptoss_local.store.errors import SourceError
from gptoss_local.store.http_fetch import Final, Transient, Unresolvable, describe, open_at
from gptoss_local.store.progress import Meter, Notice
from gptoss_local.store.sink import HashingSink
from gptoss_local.units import size_text

_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+|\*)")
_HTML_STARTS = (b"<!doctype", b"<html", b"<head", b"<?xml", b"<body")


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try one source before moving on.

    Attributes:
        attempts: Failed attempts in a row (without new bytes) before giving up on a source.
        backoff: Seconds before the first retry; doubled for each further one.
        max_backoff: Longest wait between attempts.
        timeout: Seconds to wait for a connection or for the next bytes.
        chunk: Most bytes per read (the size of each of the sink's buffers).
        sleep: Waits between attempts (tests pass a no-op).
    """

    attempts: int = 6
    backoff: float = 1.0
    max_backoff: float = 30.0
    timeout: float = 30.0
    chunk: int = 1 << 20
    sleep: Callable[[float], None] = field(default=time.sleep)

    def delay(self, failures: int) -> float:
        """Seconds to wait after `failures` failed attempts in a row."""
        return float(min(self.max_backoff, self.backoff * 2 ** (failures - 1)))


@dataclass
class Job:
    """One file being downloaded: where it goes, what it must be, who served its bytes."""

    file: ModelFile
    sink: HashingSink
    meter: Meter
    notice: Notice
    magic: bytes | None = None  # what the file must start with (b"GGUF"), checked on byte 0
    served_by: list[str] = field(default_factory=list)

    def sniff(self, head: bytes) -> None:
        """Refuse a body that is plainly not the file (from its first bytes)."""
        if head.lstrip().lower().startswith(_HTML_STARTS):
            raise Final(_("served a web page instead of the file; the address may be wrong"))
        if self.magic and not head.startswith(self.magic[: len(head)]):
            shown = "".join(chr(b) if 32 <= b < 127 else "?" for b in head[:8])
            raise Final(
                _("served something that is not a GGUF file (it starts with '{shown}')").format(
                    shown=shown
                )
            )

    def restart(self) -> None:
        """Drop the partial bytes and start from zero."""
        self.meter.set(self.meter.done - self.sink.size)
        self.sink.restart()
        self.served_by.clear()


def fetch(
    job: Job, url: str, source: str, policy: RetryPolicy, opener: urllib.request.OpenerDirector
) -> None:
    """Fill `job.sink` up to the file's size from `url`, retrying with backoff.

    Raises:
        SourceError: the source failed for good, or too many attempts in a row failed.
        DiskFullError, StoreError: writing failed; do not try another source.
    """
    failures = 0
    while job.sink.size < job.file.bytes:
        before = job.sink.size
        try:
            with open_at(opener, url, job.sink.size, policy.timeout) as response:
                _consume(job, response, source)
        except Final as exc:
            raise SourceError(source, str(exc), isinstance(exc, Unresolvable)) from None
        except Transient as exc:
            failures = 1 if job.sink.size > before else failures + 1
            if failures >= policy.attempts:
                raise SourceError(
                    source,
                    _("gave up after {failures} failed attempts in a row: {exc}").format(
                        failures=failures, exc=exc
                    ),
                ) from None
            wait = policy.delay(failures)
            job.notice(
                _(
                    "{source}: {exc} at {done} of {name}; retrying in {wait:.0f} s "
                    "(attempt {attempt} of {attempts})"
                ).format(
                    source=source,
                    exc=exc,
                    done=size_text(job.sink.size),
                    name=job.file.name,
                    wait=wait,
                    attempt=failures + 1,
                    attempts=policy.attempts,
                )
            )
            policy.sleep(wait)


def _consume(job: Job, response: http.client.HTTPResponse, source: str) -> None:
    promised = _check_response(job, response)
    starts_over = response.status == 200 and job.sink.size > 0
    got = 0
    try:
        if job.sink.size == 0 or starts_over:
            job.sniff(response.peek(64)[:64])  # before a byte is written, or the partial dropped
        if starts_over:
            job.notice(
                _("{source} ignored the request to resume {name}; starting over").format(
                    source=source, name=job.file.name
                )
            )
            job.restart()
        if source not in job.served_by:
            job.served_by.append(source)
        while job.sink.size < job.file.bytes:
            # readinto1: whatever has arrived (one recv), so slow links still show progress
            n = job.sink.append_from(response.readinto1, job.file.bytes - job.sink.size)
            if not n:
                break
            job.meter.add(n)
            got += n
    except (http.client.HTTPException, OSError) as exc:  # the sink raises StoreError, not these
        raise Transient(describe(exc)) from None
    _check_end(job, got, promised)


def _check_response(job: Job, response: http.client.HTTPResponse) -> int | None:
    """Check status and headers; returns the body length the answer promises, if it says."""
    status, start = response.status, job.sink.size
    length = response.headers.get("Content-Length")
    promised = int(length) if length and length.isdigit() else None
    if status == 206:
        _check_range(job, response.headers.get("Content-Range", ""), start)
    elif status != 200:
        raise Final(
            _("unexpected HTTP {status} {reason}").format(status=status, reason=response.reason)
        )
    kind = response.headers.get("Content-Type", "").split(";")[0].strip().lower()
    if kind in ("text/html", "application/xhtml+xml"):
        raise Final(
            _("served a web page (text/html) instead of the file; the address may be wrong")
        )
    if promised == 0:
        raise Final(_("served an empty body instead of the file"))
    if status == 200 and promised is not None and promised != job.file.bytes:
        raise Final(
            _("says the file is {promised:,} bytes, but the manifest says {bytes:,}").format(
                promised=promised, bytes=job.file.bytes
            )
        )
    return promised


def _check_range(job: Job, header: str, start: int) -> None:
    match = _CONTENT_RANGE.fullmatch(header.strip())
    if not match or int(match[1]) != start:
        raise Final(
            _("answered a request for bytes from {start:,} with {header!r}").format(
                start=start, header=header or "no range"
            )
        )
    if match[3] != "*" and int(match[3]) != job.file.bytes:
        raise Final(
            _("says the file is {size:,} bytes, but the manifest says {bytes:,}").format(
                size=int(match[3]), bytes=job.file.bytes
            )
        )


def _check_end(job: Job, got: int, promised: int | None) -> None:
    if job.sink.size >= job.file.bytes:
        return
    if got == 0 and promised is None:
        raise Final(_("served an empty body instead of the file"))
    closed = (
        _("the connection closed after {got:,} bytes").format(got=got)
        if promised is None
        else _("the connection closed after {got:,} of {total:,} bytes").format(
            got=got, total=promised
        )
    )
    raise Transient(closed)
