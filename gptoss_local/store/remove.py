"""`rm`: delete a model's files (finished, partial, records, stale locks) from the models folder."""

from __future__ import annotations

from pathlib import Path

from gptoss_local.catalog import ModelSpec
from gptoss_local.i18n import _
from gptoss_local.store.errors import LockedError, StoreError
from gptoss_local.store.layout import file_paths
from gptoss_local.store.lock import holder, holder_text

_TEMP_SUFFIXES = (".copying", ".adopting")


def model_files(spec: ModelSpec, folder: Path | None = None) -> list[Path]:
    """Every file of `spec` that exists in the models folder, companions included."""
    found = []
    for file in spec.files:
        fp = file_paths(file.name, folder)
        temps = [fp.final.with_name(fp.name + s) for s in _TEMP_SUFFIXES]
        found += [p for p in (fp.final, fp.part, fp.record, fp.lock, *temps) if p.exists()]
    return found


def shared_bytes(files: list[Path]) -> int:
    """Bytes among `files` that are hard links also present elsewhere (deleting frees nothing)."""
    return sum(p.stat().st_size for p in files if p.stat().st_nlink > 1)


def remove_model(spec: ModelSpec, folder: Path | None = None) -> tuple[list[Path], int]:
    """Delete `spec`'s files; returns them and the bytes they held.

    Raises:
        LockedError: a pull of one of the files is running.
        StoreError: a file could not be deleted.
    """
    for file in spec.files:
        fp = file_paths(file.name, folder)
        pid = holder(fp.lock) if fp.lock.exists() else None
        if pid is not None:
            raise LockedError(
                _("a pull of {name} is running ({who}); stop it, then run rm again").format(
                    name=file.name, who=holder_text(pid)
                )
            )
    files = model_files(spec, folder)
    freed = 0
    for path in files:
        try:
            size = path.stat().st_size
            path.unlink()
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise StoreError(
                _("cannot delete {path}: {error}").format(path=path, error=exc.strerror or exc)
            ) from None
        freed += size
    return files, freed
