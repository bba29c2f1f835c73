"""The model manifest: models, files, sources and known GPUs (`load()` reads and validates it)."""

from gptoss_local.catalog.manifest import MANIFEST_ENV, load, manifest_path
from gptoss_local.catalog.specs import (
    Catalog,
    KnownGpu,
    ManifestError,
    ModelFile,
    ModelSpec,
    Shape,
    Source,
)

__all__ = [
    "MANIFEST_ENV",
    "Catalog",
    "KnownGpu",
    "ManifestError",
    "ModelFile",
    "ModelSpec",
    "Shape",
    "Source",
    "load",
    "manifest_path",
]
