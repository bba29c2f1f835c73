"""What the models folder holds of each manifest model: absent, partial, present, verified, corrupt.

Cheap: only `stat` calls and the verification records are read, never the weights.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gptoss_local.catalog import Catalog, ModelFile, ModelSpec
from gptoss_local.store.layout import file_paths
from gptoss_local.store.records import recorded_gguf_problem, recorded_sha256


@dataclass(frozen=True)
class FileState:
    """One file: its state, its size in the manifest, the bytes on disk and its path."""

    name: str
    state: str
    bytes: int
    on_disk: int
    path: Path


@dataclass(frozen=True)
class ModelState:
    """One model: the state of its files together, and the path handed to llama.cpp."""

    name: str
    aliases: tuple[str, ...]
    state: str
    bytes: int
    on_disk: int
    path: Path
    files: tuple[FileState, ...]

    @property
    def percent(self) -> float:
        """Share of the model's bytes on disk, 0 to 100."""
        return 100.0 * min(self.on_disk, self.bytes) / self.bytes if self.bytes else 0.0

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (paths as strings)."""
        return {
            "name": self.name,
            "aliases": list(self.aliases),
            "state": self.state,
            "percent": round(self.percent, 1),
            "bytes": self.bytes,
            "bytes_on_disk": self.on_disk,
            "path": str(self.path),
            "files": [
                {"name": f.name, "state": f.state, "bytes": f.bytes, "bytes_on_disk": f.on_disk,
                 "path": str(f.path)}
                for f in self.files
            ],
        }  # fmt: skip


def file_state(file: ModelFile, folder: Path | None = None) -> FileState:
    """The state of one manifest file in `folder` (default: the models folder)."""
    fp = file_paths(file.name, folder)
    try:
        size = fp.final.stat().st_size
    except (FileNotFoundError, NotADirectoryError):  # the latter: the folder is a file
        try:
            part = fp.part.stat().st_size
        except (FileNotFoundError, NotADirectoryError):
            return FileState(file.name, "absent", file.bytes, 0, fp.final)
        return FileState(file.name, "partial", file.bytes, min(part, file.bytes), fp.final)
    recorded = recorded_sha256(fp) if size == file.bytes else None
    wrong = recorded is not None and recorded != file.sha256
    if size != file.bytes or wrong or recorded_gguf_problem(fp):
        state = "corrupt"
    else:
        state = "verified" if recorded == file.sha256 else "present"
    return FileState(file.name, state, file.bytes, size, fp.final)


def model_state(spec: ModelSpec, folder: Path | None = None) -> ModelState:
    """The state of a model: corrupt if any file is, verified if all are, and so on."""
    files = tuple(file_state(f, folder) for f in spec.files)
    states = {f.state for f in files}
    if "corrupt" in states:
        state = "corrupt"
    elif states <= {"verified"}:
        state = "verified"
    elif states <= {"verified", "present"}:
        state = "present"
    elif states == {"absent"}:
        state = "absent"
    else:
        state = "partial"
    on_disk = sum(f.on_disk for f in files)
    return ModelState(
        spec.name, spec.aliases, state, spec.total_bytes, on_disk, files[0].path, files
    )


def model_states(catalog: Catalog, folder: Path | None = None) -> list[ModelState]:
    """Every manifest model's state, in manifest order."""
    return [model_state(spec, folder) for spec in catalog.models]
