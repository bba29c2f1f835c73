"""Copies of the manifest's files that other tools already downloaded.

Looked up, never trusted: a copy of the right size is hashed before it is linked or copied in.
Locations: the Hugging Face hub cache, llama.cpp's `-hf` cache and LM Studio's models folder.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from gptoss_local.catalog import ModelFile, ModelSpec
from gptoss_local.catalog.schema import check_file_name


@dataclass(frozen=True)
class Candidate:
    """A file elsewhere on disk with the right name and size."""

    path: Path
    where: str


def _env(env: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if env is None else env


def _cache_home(env: Mapping[str, str]) -> Path:
    xdg = env.get("XDG_CACHE_HOME", "").strip()
    return Path(xdg) if xdg else Path.home() / ".cache"


def hf_hub_cache(env: Mapping[str, str] | None = None) -> Path:
    """The Hugging Face hub cache: HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub."""
    e = _env(env)
    for name in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if e.get(name, "").strip():
            return Path(e[name]).expanduser()
    home = e.get("HF_HOME", "").strip()
    return (Path(home).expanduser() if home else _cache_home(e) / "huggingface") / "hub"


def llama_cache(env: Mapping[str, str] | None = None) -> Path:
    """llama.cpp's download cache: LLAMA_CACHE, else the OS cache folder + llama.cpp."""
    e = _env(env)
    if e.get("LLAMA_CACHE", "").strip():
        return Path(e["LLAMA_CACHE"]).expanduser()
    if sys.platform == "win32" and e.get("LOCALAPPDATA"):
        return Path(e["LOCALAPPDATA"]) / "llama.cpp"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "llama.cpp"
    return _cache_home(e) / "llama.cpp"


def lmstudio_models() -> tuple[Path, ...]:
    """LM Studio's models folders: the current one and the one older versions used."""
    return (Path.home() / ".lmstudio" / "models", Path.home() / ".cache" / "lm-studio" / "models")


def _safe_names(spec: ModelSpec, file: ModelFile) -> bool:
    """The repo, revision and file name become path parts: refuse any that could escape."""
    try:
        for part in (*spec.repo.split("/"), spec.revision, file.name):
            check_file_name(part)
    except ValueError:
        return False
    return True


def _hf_paths(spec: ModelSpec, file: ModelFile, env: Mapping[str, str] | None) -> Iterator[Path]:
    snapshots = hf_hub_cache(env) / ("models--" + spec.repo.replace("/", "--")) / "snapshots"
    yield snapshots / spec.revision / file.name  # the manifest's revision first
    try:
        others = sorted(p for p in snapshots.iterdir() if p.name != spec.revision)
    except OSError:
        return
    yield from (p / file.name for p in others)


def _lmstudio_paths(spec: ModelSpec, file: ModelFile) -> Iterator[Path]:
    for root in lmstudio_models():
        yield root / spec.repo / file.name
        yield from sorted(root.glob(f"*/*/{file.name}"))


def _all_paths(
    spec: ModelSpec, file: ModelFile, env: Mapping[str, str] | None
) -> Iterator[tuple[Path, str]]:
    for path in _hf_paths(spec, file, env):
        yield path, "the Hugging Face cache"
    yield llama_cache(env) / (spec.repo.replace("/", "_") + "_" + file.name), "llama.cpp's cache"
    for path in _lmstudio_paths(spec, file):
        yield path, "LM Studio's models folder"


def find_copies(
    spec: ModelSpec, file: ModelFile, env: Mapping[str, str] | None = None
) -> list[Candidate]:
    """Files elsewhere with `file`'s name and size (not yet hashed), each listed once."""
    if not _safe_names(spec, file):
        return []
    found: list[Candidate] = []
    seen: set[Path] = set()
    for path, where in _all_paths(spec, file, env):
        try:
            real = path.resolve()
            if not real.is_file() or real.stat().st_size != file.bytes or real in seen:
                continue
        except (OSError, RuntimeError):  # dangling or looping symlinks
            continue
        seen.add(real)
        found.append(Candidate(path, where))
    return found
