"""Validation of the manifest's raw TOML into catalog objects, with errors that name the entry."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path, PurePosixPath, PureWindowsPath
from string import Formatter
from typing import Any

from gptoss_local.catalog.specs import (
    Catalog,
    KnownGpu,
    ModelFile,
    ModelSpec,
    Shape,
    Source,
)
from gptoss_local.i18n import _
from gptoss_local.urls import has_control_character, url_problem

SCHEMA = 1
TEMPLATE_FIELDS = ("repo", "revision", "file")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_SHAPE_FIELDS = tuple(field.name for field in fields(Shape))


class EntryError(Exception):
    """One manifest entry is wrong; the message starts with its dotted key.

    The words are translated (whoever edits the manifest reads them); the dotted keys, TOML
    type names and placeholders such as {file} stay as the manifest spells them.
    """


def build_catalog(path: Path, raw: dict[str, Any]) -> Catalog:
    """Turn parsed TOML into a `Catalog`; raises EntryError on the first bad entry."""
    if raw.get("schema") != SCHEMA:
        raise EntryError(
            _("schema: expected {expected}, found {found}").format(
                expected=SCHEMA, found=repr(raw.get("schema"))
            )
        )
    sources = tuple(_source(n, v) for n, v in _table(raw, "sources", "sources").items())
    models = tuple(_model(n, v) for n, v in _table(raw, "models", "models").items())
    if not models:
        raise EntryError(_("models: the manifest lists no models"))
    if not sources:
        raise EntryError(_("sources: the manifest lists no download sources"))
    gpus = tuple(_gpu(i, v) for i, v in enumerate(raw.get("gpus", [])))
    return Catalog(path=path, models=models, sources=sources, gpus=gpus)


def check_file_name(name: str) -> None:
    """Refuse names that could escape the models folder (separators, `..`, absolute paths) or
    that no URL can carry (control characters)."""
    if (
        not name
        or name in (".", "..")
        or "/" in name
        or "\\" in name
        or has_control_character(name)
        or PurePosixPath(name).is_absolute()
        or PureWindowsPath(name).drive
    ):
        raise ValueError(
            _("unsafe file name {name}: it must be a plain file name").format(name=repr(name))
        )


def _table(parent: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    value = parent.get(key)
    if not isinstance(value, dict):
        raise EntryError(_("{where}: missing or not a table").format(where=where))
    return value


def _get(table: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    value = table.get(key)
    if isinstance(value, bool) or not isinstance(value, kind):
        expected = (
            kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        )
        raise EntryError(
            _("{where}: expected {expected}, found {found}").format(
                where=f"{where}.{key}", expected=expected, found=repr(value)
            )
        )
    return value


def _source(name: str, table: Any) -> Source:
    where = f"sources.{name}"
    if not isinstance(table, dict):
        raise EntryError(_("{where}: not a table").format(where=where))
    url = _get(table, "url", str, where)
    if any(c.isspace() for c in url):  # else every download fails as if the network had
        raise EntryError(
            _("{where}: holds a space: {url} (write a space as %20)").format(
                where=f"{where}.url", url=repr(url)
            )
        )
    if url_problem(url) or "{file}" not in url:
        raise EntryError(
            _(
                "{where}: must be an https:// template containing {file} "
                "(http:// only for this machine: localhost, 127.0.0.1 or ::1)"
            ).format(where=f"{where}.url", file="{file}")
        )
    _check_template(url, f"{where}.url")
    endpoint_env = table.get("endpoint_env")
    if endpoint_env is not None and not isinstance(endpoint_env, str):
        raise EntryError(
            _("{where}: expected {expected}, found {found}").format(
                where=f"{where}.endpoint_env", expected="str", found=repr(endpoint_env)
            )
        )
    return Source(name=name, url=url, endpoint_env=endpoint_env)


def _check_template(url: str, where: str) -> None:
    """Only {repo}, {revision} and {file} may be filled in; anything else is a typo."""
    try:
        parts = [(f, spec, conv) for _t, f, spec, conv in Formatter().parse(url) if f is not None]
    except ValueError as exc:  # a lone { or }
        raise EntryError(
            _("{where}: not a valid template ({error})").format(where=where, error=exc)
        ) from None
    bad = [f"{{{f}{'!' + conv if conv else ''}{':' + spec if spec else ''}}}"
           for f, spec, conv in parts if f not in TEMPLATE_FIELDS or spec or conv]  # fmt: skip
    if bad:
        allowed = ", ".join(f"{{{f}}}" for f in TEMPLATE_FIELDS)
        raise EntryError(
            _("{where}: unknown field {fields}; a template may use {allowed}").format(
                where=where, fields=", ".join(bad), allowed=allowed
            )
        )


def _model(name: str, table: Any) -> ModelSpec:
    where = f"models.{name}"
    if not isinstance(table, dict):
        raise EntryError(_("{where}: not a table").format(where=where))
    files = _get(table, "files", list, where)
    if not files:
        raise EntryError(_("{where}: no files listed").format(where=f"{where}.files"))
    aliases = _get(table, "aliases", list, where)
    if not all(isinstance(a, str) and a.strip() for a in aliases):
        raise EntryError(
            _("{where}: expected a list of names, found {found}").format(
                where=f"{where}.aliases", found=repr(aliases)
            )
        )
    repo, revision = _get(table, "repo", str, where), _get(table, "revision", str, where)
    for key, value in (("repo", repo), ("revision", revision)):
        if not value or has_control_character(value) or any(c in value for c in "{} ?#"):
            raise EntryError(
                _("{where}: not usable in a URL: {value}").format(
                    where=f"{where}.{key}", value=repr(value)
                )
            )
    return ModelSpec(
        name=name,
        aliases=tuple(aliases),
        repo=repo,
        revision=revision,
        license=_get(table, "license", str, where),
        ollama_tag=_get(table, "ollama_tag", str, where),
        files=tuple(_file(f"{where}.files[{i}]", f) for i, f in enumerate(files)),
        shape=_shape(f"{where}.shape", _table(table, "shape", f"{where}.shape")),
    )


def _file(where: str, table: Any) -> ModelFile:
    if not isinstance(table, dict):
        raise EntryError(_("{where}: not a table").format(where=where))
    name = _get(table, "name", str, where)
    try:
        check_file_name(name)
    except ValueError as exc:
        raise EntryError(f"{where}.name: {exc}") from None  # exc is translated already
    size = _get(table, "bytes", int, where)
    sha256 = _get(table, "sha256", str, where).lower()
    if size <= 0:
        raise EntryError(_positive(f"{where}.bytes", size))
    if not _SHA256.fullmatch(sha256):
        raise EntryError(
            _("{where}: must be 64 hexadecimal digits, found {found}").format(
                where=f"{where}.sha256", found=repr(sha256)
            )
        )
    return ModelFile(name=name, bytes=size, sha256=sha256)


def _shape(where: str, table: dict[str, Any]) -> Shape:
    values = {key: _get(table, key, int, where) for key in _SHAPE_FIELDS}
    for key, value in values.items():
        if value <= 0:
            raise EntryError(_positive(f"{where}.{key}", value))
    if values["experts_used"] > values["experts"]:
        raise EntryError(
            _("{where}: more than experts ({experts})").format(
                where=f"{where}.experts_used", experts=values["experts"]
            )
        )
    return Shape(**values)


def _positive(where: str, value: int) -> str:
    return _("{where}: must be positive, found {found}").format(where=where, found=value)


def _gpu(index: int, table: Any) -> KnownGpu:
    where = f"gpus[{index}]"
    if not isinstance(table, dict):
        raise EntryError(_("{where}: not a table").format(where=where))
    match = _get(table, "match", str, where)
    bandwidth = float(_get(table, "bandwidth_gbs", (int, float), where))
    decode: dict[str, tuple[float, float]] = {}
    for model, span in table.get("decode", {}).items():
        if not (isinstance(span, list) and len(span) == 2 and 0 < span[0] <= span[1]):
            raise EntryError(
                _("{where}: expected [typical, best], found {found}").format(
                    where=f"{where}.decode.{model}", found=repr(span)
                )
            )
        decode[model] = (float(span[0]), float(span[1]))
    return KnownGpu(match=match, bandwidth_gbs=bandwidth, decode=decode)
