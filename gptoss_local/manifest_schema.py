"""Validation of the manifest's raw TOML into catalog objects, with errors that name the entry."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import fields
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any
from urllib.parse import urlsplit

from gptoss_local.catalog import (
    Catalog,
    KnownGpu,
    ModelFile,
    ModelSpec,
    Shape,
    Source,
)

SCHEMA = 1
_SHA256 = re.compile(r"[0-9a-f]{64}")
_SHAPE_FIELDS = tuple(field.name for field in fields(Shape))


class EntryError(Exception):
    """One manifest entry is wrong; the message starts with its dotted key."""


def build_catalog(path: Path, raw: dict[str, Any]) -> Catalog:
    """Turn parsed TOML into a `Catalog`; raises EntryError on the first bad entry."""
    if raw.get("schema") != SCHEMA:
        raise EntryError(f"schema: expected {SCHEMA}, found {raw.get('schema')!r}")
    sources = tuple(_source(n, v) for n, v in _table(raw, "sources", "sources").items())
    models = tuple(_model(n, v) for n, v in _table(raw, "models", "models").items())
    if not models:
        raise EntryError("models: the manifest lists no models")
    if not sources:
        raise EntryError("sources: the manifest lists no download sources")
    gpus = tuple(_gpu(i, v) for i, v in enumerate(raw.get("gpus", [])))
    return Catalog(path=path, models=models, sources=sources, gpus=gpus)


def check_file_name(name: str) -> None:
    """Refuse names that could escape the models folder (separators, `..`, absolute paths)."""
    if (
        not name
        or name in (".", "..")
        or "/" in name
        or "\\" in name
        or "\x00" in name
        or PurePosixPath(name).is_absolute()
        or PureWindowsPath(name).drive
    ):
        raise ValueError(f"unsafe file name {name!r}: it must be a plain file name")


def is_loopback_host(host: str | None) -> bool:
    """True for `localhost` and loopback addresses (127.0.0.0/8, ::1): traffic that stays here."""
    if not host:
        return False
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _url_allowed(url: str) -> bool:
    """https:// anywhere; clear-text http:// only to this machine (local mirrors, tests)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return False
    return parts.scheme == "https" or (parts.scheme == "http" and is_loopback_host(host))


def _table(parent: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    value = parent.get(key)
    if not isinstance(value, dict):
        raise EntryError(f"{where}: missing or not a table")
    return value


def _get(table: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    value = table.get(key)
    if isinstance(value, bool) or not isinstance(value, kind):
        expected = (
            kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        )
        raise EntryError(f"{where}.{key}: expected {expected}, found {value!r}")
    return value


def _source(name: str, table: Any) -> Source:
    where = f"sources.{name}"
    if not isinstance(table, dict):
        raise EntryError(f"{where}: not a table")
    url = _get(table, "url", str, where)
    if not _url_allowed(url) or "{file}" not in url:
        raise EntryError(
            f"{where}.url: must be an https:// template containing {{file}} "
            "(http:// only for this machine: localhost, 127.0.0.1 or ::1)"
        )
    endpoint_env = table.get("endpoint_env")
    return Source(name=name, url=url, endpoint_env=endpoint_env)


def _model(name: str, table: Any) -> ModelSpec:
    where = f"models.{name}"
    if not isinstance(table, dict):
        raise EntryError(f"{where}: not a table")
    files = _get(table, "files", list, where)
    if not files:
        raise EntryError(f"{where}.files: no files listed")
    return ModelSpec(
        name=name,
        aliases=tuple(_get(table, "aliases", list, where)),
        repo=_get(table, "repo", str, where),
        revision=_get(table, "revision", str, where),
        license=_get(table, "license", str, where),
        ollama_tag=_get(table, "ollama_tag", str, where),
        files=tuple(_file(f"{where}.files[{i}]", f) for i, f in enumerate(files)),
        shape=_shape(f"{where}.shape", _table(table, "shape", f"{where}.shape")),
    )


def _file(where: str, table: Any) -> ModelFile:
    if not isinstance(table, dict):
        raise EntryError(f"{where}: not a table")
    name = _get(table, "name", str, where)
    try:
        check_file_name(name)
    except ValueError as exc:
        raise EntryError(f"{where}.name: {exc}") from None
    size = _get(table, "bytes", int, where)
    sha256 = _get(table, "sha256", str, where).lower()
    if size <= 0:
        raise EntryError(f"{where}.bytes: must be positive, found {size}")
    if not _SHA256.fullmatch(sha256):
        raise EntryError(f"{where}.sha256: must be 64 hexadecimal digits, found {sha256!r}")
    return ModelFile(name=name, bytes=size, sha256=sha256)


def _shape(where: str, table: dict[str, Any]) -> Shape:
    values = {key: _get(table, key, int, where) for key in _SHAPE_FIELDS}
    for key, value in values.items():
        if value <= 0:
            raise EntryError(f"{where}.{key}: must be positive, found {value}")
    if values["experts_used"] > values["experts"]:
        raise EntryError(f"{where}.experts_used: more than experts ({values['experts']})")
    return Shape(**values)


def _gpu(index: int, table: Any) -> KnownGpu:
    where = f"gpus[{index}]"
    if not isinstance(table, dict):
        raise EntryError(f"{where}: not a table")
    match = _get(table, "match", str, where)
    bandwidth = float(_get(table, "bandwidth_gbs", (int, float), where))
    decode: dict[str, tuple[float, float]] = {}
    for model, span in table.get("decode", {}).items():
        if not (isinstance(span, list) and len(span) == 2 and 0 < span[0] <= span[1]):
            raise EntryError(f"{where}.decode.{model}: expected [typical, best], found {span!r}")
        decode[model] = (float(span[0]), float(span[1]))
    return KnownGpu(match=match, bandwidth_gbs=bandwidth, decode=decode)
