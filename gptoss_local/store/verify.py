"""`verify`: hash a model's files again, record the result, and check the GGUF."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gptoss_local.catalog import ModelSpec
from gptoss_local.store.gguf_check import GgufError, check_gguf
from gptoss_local.store.hashing import sha256_file
from gptoss_local.store.layout import file_paths
from gptoss_local.store.progress import Meter, ProgressFn, ignore_progress
from gptoss_local.store.records import write_record

if TYPE_CHECKING:
    from gptoss_local.store.gguf_check import GgufError


@dataclass(frozen=True)
class FileCheck:
    """One file's verdict: "ok", "mismatch", "wrong size", "partial" or "missing"."""

    name: str
    path: Path
    verdict: str
    sha256: str | None = None
    recorded: bool = True  # False: the result could not be saved (a read-only folder)


@dataclass(frozen=True)
class ModelCheck:
    """A model's verdicts, and the GGUF check's refusal when the files hash right but fail it."""

    spec: ModelSpec
    files: tuple[FileCheck, ...]
    gguf_problem: str | None = None

    @property
    def ok(self) -> bool:
        """True when every file is present, hashes right and the GGUF check passed."""
        return not self.gguf_problem and all(f.verdict == "ok" for f in self.files)


def verify_model(
    spec: ModelSpec, progress: ProgressFn = ignore_progress, folder: Path | None = None
) -> ModelCheck:
    """Hash every file of `spec` that is present (recording the result) and check the GGUF."""
    checks = []
    for file in spec.files:
        fp = file_paths(file.name, folder)
        if not fp.final.is_file():
            verdict = "partial" if fp.part.is_file() else "missing"
            checks.append(FileCheck(file.name, fp.final, verdict))
            continue
        if fp.final.stat().st_size != file.bytes:
            checks.append(FileCheck(file.name, fp.final, "wrong size"))
            continue
        sha = sha256_file(fp.final, Meter(progress, "verify", file.name, file.bytes))
        recorded = write_record(fp, sha)
        verdict = "ok" if sha == file.sha256 else "mismatch"
        checks.append(FileCheck(file.name, fp.final, verdict, sha, recorded))
    problem = None
    if all(c.verdict == "ok" for c in checks) and checks[0].path.suffix == ".gguf":
        refused = gguf_problem(checks[0].path)
        if refused:  # so that `models` stops calling it verified
            problem = str(refused)
            write_record(file_paths(spec.files[0].name, folder), spec.files[0].sha256, problem)
    return ModelCheck(spec, tuple(checks), problem)


def gguf_problem(path: Path) -> GgufError | None:
    """Why the GGUF check refuses the model whose (first) file is `path`; None when it is fine."""

    try:
        check_gguf(path)
    except GgufError as exc:
        return exc
    return None
