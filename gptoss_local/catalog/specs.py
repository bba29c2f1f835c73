"""What the model manifest describes: models, their files and shapes, sources, known GPUs."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from gptoss_local.errors import UnknownModelError, UnknownSourceError, UserError
from gptoss_local.i18n import _


class ManifestError(UserError):
    """The manifest cannot be used; the message names the file and the bad entry."""


@dataclass(frozen=True)
class ModelFile:
    """One weight file of a model."""

    name: str
    bytes: int
    sha256: str


@dataclass(frozen=True)
class Shape:
    """Architecture numbers the memory estimate needs. Sizes in bytes."""

    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    experts: int
    experts_used: int
    vocab: int
    sliding_window: int
    context_max: int
    params_total: int
    params_active: int
    kv_bytes_per_token: int
    expert_layer_bytes: int
    token_embd_bytes: int
    decode_bytes_per_token: int


@dataclass(frozen=True)
class ModelSpec:
    """A downloadable model: its files, where they come from, and its shape."""

    name: str
    aliases: tuple[str, ...]
    repo: str
    revision: str
    license: str
    ollama_tag: str
    files: tuple[ModelFile, ...]
    shape: Shape

    @property
    def total_bytes(self) -> int:
        """Size of all files together."""
        return sum(f.bytes for f in self.files)

    @property
    def entry_file(self) -> ModelFile:
        """The file handed to llama.cpp (the first shard of a split model)."""
        return self.files[0]


@dataclass(frozen=True)
class Source:
    """A download source: a URL template with {repo}, {revision} and {file}."""

    name: str
    url: str
    endpoint_env: str | None = None

    def url_for(
        self, model: ModelSpec, file: ModelFile, env: Mapping[str, str] | None = None
    ) -> str:
        """The file's URL; an endpoint variable (HF_ENDPOINT) replaces the template's base."""
        environ: Mapping[str, str] = os.environ if env is None else env
        template = self.url
        override = environ.get(self.endpoint_env, "").strip() if self.endpoint_env else ""
        if override:
            base = re.match(r"[a-z]+://[^/]+", template)
            if base:  # braces in the variable are text, not template fields
                literal = override.rstrip("/").replace("{", "{{").replace("}", "}}")
                template = literal + template[base.end() :]
        return template.format(repo=model.repo, revision=model.revision, file=file.name)


@dataclass(frozen=True)
class KnownGpu:
    """Published facts about a GPU model: bandwidth and decode speed ranges per model."""

    match: str
    bandwidth_gbs: float
    decode: dict[str, tuple[float, float]]


@dataclass(frozen=True)
class Catalog:
    """Everything the manifest says."""

    path: Path
    models: tuple[ModelSpec, ...]
    sources: tuple[Source, ...]
    gpus: tuple[KnownGpu, ...]

    def model(self, name_or_alias: str) -> ModelSpec:
        """Look a model up by name (`gpt-oss-20b`) or alias (`20b`).

        Raises:
            UnknownModelError: none has that name; the message lists the choices.
        """
        for spec in self.models:
            if name_or_alias == spec.name or name_or_alias in spec.aliases:
                return spec
        choices = ", ".join(n for m in self.models for n in (m.name, *m.aliases))
        raise UnknownModelError(
            _("unknown model {name!r}; choose one of {choices}").format(
                name=name_or_alias, choices=choices
            )
        )

    def source(self, name: str) -> Source:
        """Look a source up by name; UnknownModelError lists the choices."""
        for source in self.sources:
            if source.name == name:
                return source
        names = ", ".join(self.source_names)
        raise UnknownSourceError(
            _("unknown source {name!r}; choose one of {names}").format(name=name, names=names)
        )

    @property
    def source_names(self) -> tuple[str, ...]:
        """Source names in manifest order (the order they are tried in)."""
        return tuple(s.name for s in self.sources)

    def known_gpu(self, gpu_name: str) -> KnownGpu | None:
        """The longest `match` contained in an NVML GPU name, if any."""
        hits = [g for g in self.gpus if g.match.lower() in gpu_name.lower()]
        return max(hits, key=lambda g: len(g.match), default=None)
