"""`import PATH`: adopt a file downloaded by hand, once it is proven to be a manifest file."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gptoss_local import paths
from gptoss_local.catalog import Catalog, ModelFile, ModelSpec
from gptoss_local.catalog.schema import check_file_name
from gptoss_local.i18n import _
from gptoss_local.store.adopt import adopt
from gptoss_local.store.errors import StoreError
from gptoss_local.store.gguf_check import check_gguf
from gptoss_local.store.layout import file_paths
from gptoss_local.store.lock import FileLock
from gptoss_local.store.progress import Notice, ProgressFn, ignore_notice, ignore_progress
from gptoss_local.store.records import recorded_sha256


@dataclass(frozen=True)
class ImportResult:
    """The file's model, where it now is, and how: "linked", "moved", "copied" or "present"."""

    spec: ModelSpec
    file: ModelFile
    path: Path
    how: str


def match_file(src: Path, catalog: Catalog) -> tuple[ModelSpec, ModelFile]:
    """The manifest file `src` claims to be: by name, else (renamed by hand) by size.

    Raises:
        StoreError: no manifest file has that name and size; the message lists the choices.
    """
    size = src.stat().st_size
    pairs = [(spec, f) for spec in catalog.models for f in spec.files]
    named = [(s, f) for s, f in pairs if f.name == src.name]
    if named and named[0][1].bytes != size:
        f = named[0][1]
        raise StoreError(
            _(
                "{src} is {size:,} bytes, but the manifest's {name} is {bytes:,} "
                "bytes: it is incomplete or a different conversion (LM Studio's and "
                "Ollama's files differ). Download it again, or use `run --model-path` "
                "for a file of your own."
            ).format(src=src, size=size, name=f.name, bytes=f.bytes)
        )
    sized = named or [(s, f) for s, f in pairs if f.bytes == size]
    if not sized:
        listed = "\n".join(f"  - {f.name} ({f.bytes:,} bytes)" for _src, f in pairs)
        raise StoreError(
            _(
                "{src} ({size:,} bytes) is not a file of the manifest. Expected one of:\n{listed}"
            ).format(src=src, size=size, listed=listed)
        )
    return sized[0]


def import_file(
    src: Path,
    catalog: Catalog,
    *,
    move: bool = False,
    progress: ProgressFn = ignore_progress,
    notice: Notice = ignore_notice,
    folder: Path | None = None,
) -> ImportResult:
    """Verify `src` (GGUF structure, size, sha256) and put it in the models folder.

    Raises:
        StoreError: not a manifest file, or its sha256 differs.
        GgufError: not a well-formed gpt-oss GGUF.
    """

    if not src.is_file():
        raise StoreError(_("{src} is not a file").format(src=src))
    check_file_name(src.name)
    spec, file = match_file(src, catalog)
    if file.name.endswith(".gguf"):
        check_gguf(src, check_shards=False)  # before hashing: it takes 0.1 s, hashing minutes
    if move and src.is_symlink():
        notice(f"{src} is a symbolic link; linking or copying its target instead of moving it")
        move = False
    folder = paths.models_dir() if folder is None else folder
    fp = file_paths(file.name, folder)
    try:
        paths.ensure_dir(folder)
        with FileLock(fp.lock).acquire(timeout=0):
            if recorded_sha256(fp) == file.sha256:
                return ImportResult(spec, file, fp.final, "present")
            how = adopt(src, file, fp, progress, move=move)
    except OSError as exc:  # a read-only folder or drive, no permission
        raise StoreError(
            _(
                "cannot write into the models folder {folder}: {error}. Make it "
                "writable, or set GPTOSS_LOCAL_HOME to a folder you can write to."
            ).format(folder=folder, error=exc.strerror or exc)
        ) from None
    if how is None:
        raise StoreError(
            _(
                "{src} has the right size but not the manifest's sha256 ({sha256}): it "
                "is damaged or a different file. Download it again (`gptoss-local pull "
                "{name}`)."
            ).format(src=src, sha256=file.sha256, name=spec.name)
        )
    return ImportResult(spec, file, fp.final, how)
