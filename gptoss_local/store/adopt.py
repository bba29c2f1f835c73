"""Put a verified copy of a manifest file into the models folder: hard link, move or copy."""

from __future__ import annotations

import os
from pathlib import Path

from gptoss_local.catalog import ModelFile
from gptoss_local.i18n import _
from gptoss_local.store.errors import StoreError
from gptoss_local.store.hashing import CHUNK, sha256_file
from gptoss_local.store.layout import FilePaths
from gptoss_local.store.progress import Meter, ProgressFn
from gptoss_local.store.records import write_record
from gptoss_local.store.sink import HashingSink


def same_device(src: Path, folder: Path) -> bool:
    """True when a hard link (or a rename) from `src` into `folder` can work."""
    try:
        return src.stat().st_dev == folder.stat().st_dev
    except OSError:
        return False


def adopt(
    src: Path, file: ModelFile, fp: FilePaths, progress: ProgressFn, *, move: bool = False
) -> str | None:
    """Verify `src` against `file` and install it as `fp.final`.

    On the same drive the file is hashed, then hard-linked (or renamed with `move`); elsewhere it
    is copied while being hashed. The models folder must exist.

    Returns:
        "linked", "moved" or "copied"; None when `src`'s sha256 is not the manifest's.

    Raises:
        DiskFullError, StoreError: the copy could not be written.
    """
    src = src.resolve()
    if same_device(src, fp.final.parent):
        if sha256_file(src, Meter(progress, "check", file.name, file.bytes)) != file.sha256:
            return None
        if _link_or_move(src, fp, move):
            write_record(fp, file.sha256)
            return "moved" if move else "linked"
    if not copy_verified(src, file, fp, progress):
        return None
    if move:
        src.unlink()
    return "moved" if move else "copied"


def _link_or_move(src: Path, fp: FilePaths, move: bool) -> bool:
    tmp = fp.final.with_name(fp.final.name + ".adopting")
    tmp.unlink(missing_ok=True)
    try:
        if move:
            os.replace(src, fp.final)
            return True
        os.link(src, tmp)
    except OSError:
        return False  # no hard links on this filesystem (FAT, some network shares): copy
    os.replace(tmp, fp.final)
    return True


def copy_verified(src: Path, file: ModelFile, fp: FilePaths, progress: ProgressFn) -> bool:
    """Copy `src` to `fp.final` through a temporary file, hashing as it goes.

    Returns:
        False (and nothing left behind) when the bytes do not have the manifest's sha256.
    """
    tmp = fp.final.with_name(fp.final.name + ".copying")
    tmp.unlink(missing_ok=True)
    sink = HashingSink(tmp, file.bytes, chunk=CHUNK)
    meter = Meter(progress, "copy", file.name, file.bytes)
    ok = False
    try:
        with src.open("rb", buffering=0) as f:
            while n := sink.append_from(f.readinto, CHUNK):
                meter.add(n)
        meter.finish()
        ok = sink.size == file.bytes and sink.hexdigest() == file.sha256
        if ok:
            sink.finish()
            os.replace(tmp, fp.final)
            write_record(fp, file.sha256)
    except OSError as exc:
        raise StoreError(
            _("cannot copy {src} to {final}: {error}").format(
                src=src, final=fp.final, error=exc.strerror or exc
            )
        ) from None
    finally:
        sink.close()
        tmp.unlink(missing_ok=True)
    return ok
