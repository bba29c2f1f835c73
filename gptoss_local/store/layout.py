"""Where each manifest file and its companions live in the models folder."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gptoss_local import paths
from gptoss_local.catalog.schema import check_file_name

PART_SUFFIX = ".incomplete"
LOCK_SUFFIX = ".lock"


@dataclass(frozen=True)
class FilePaths:
    """The finished file, the partial download, its lock and its verification record."""

    final: Path
    part: Path
    lock: Path
    record: Path

    @property
    def name(self) -> str:
        """The file's plain name."""
        return self.final.name


def file_paths(name: str, folder: Path | None = None) -> FilePaths:
    """The paths of file `name` in `folder` (default: the models folder).

    Raises:
        ValueError: `name` is not a plain file name (it could escape the folder).
    """
    check_file_name(name)
    folder = paths.models_dir() if folder is None else folder
    return FilePaths(
        final=folder / name,
        part=folder / f"{name}{PART_SUFFIX}",
        lock=folder / f"{name}{LOCK_SUFFIX}",
        record=folder / f".{name}.verified.json",
    )
