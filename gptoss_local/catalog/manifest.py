"""Reading `models/manifest.toml` (or `GPTOSS_LOCAL_MANIFEST`) into a validated `Catalog`.

The manifest ships inside the wheel; `GPTOSS_LOCAL_MANIFEST=path` points at another one (private
mirrors, tests). Every problem is reported as a `ManifestError` naming the file and the entry.
"""

from __future__ import annotations

import os
from pathlib import Path

from gptoss_local.catalog.schema import EntryError, build_catalog
from gptoss_local.catalog.specs import Catalog, ManifestError
from gptoss_local.i18n import _
from gptoss_local.tomlread import TomlReadError, load_toml

MANIFEST_ENV = "GPTOSS_LOCAL_MANIFEST"
_PACKAGE = Path(__file__).parent.parent  # gptoss_local/


def manifest_path() -> Path:
    """The manifest in use: `GPTOSS_LOCAL_MANIFEST`, the wheel's copy, or the checkout's."""
    override = os.environ.get(MANIFEST_ENV, "").strip()
    if override:
        return Path(override).expanduser()
    packaged = _PACKAGE / "models" / "manifest.toml"  # inside the wheel
    if packaged.is_file():
        return packaged
    return _PACKAGE.parent / "models" / "manifest.toml"  # a checkout


def load(path: Path | None = None) -> Catalog:
    """Read and validate the manifest.

    Raises:
        ManifestError: missing, unparsable, or with an entry that is wrong or incomplete.
    """
    path = path or manifest_path()
    try:
        raw = load_toml(path)
    except (OSError, TomlReadError) as exc:
        raise ManifestError(
            _("cannot read model manifest {path}: {error}").format(path=path, error=exc)
        ) from exc
    try:
        return build_catalog(path, raw)
    except EntryError as exc:
        raise ManifestError(
            _("model manifest {path}: {error}").format(path=path, error=exc)
        ) from exc
