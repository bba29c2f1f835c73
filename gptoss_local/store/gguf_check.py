"""Refuses a damaged, truncated or wrong GGUF file before llama.cpp ever parses it.

Only the header, the metadata and the tensor infos are read, through bounded reads; the
tensor data is never read (past one 64 KiB read-ahead), so a 60 GB model takes ~0.1 s.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import BinaryIO

from gptoss_local.errors import UserError
from gptoss_local.i18n import _
from gptoss_local.store.gguf_place import check_tensor_data
from gptoss_local.store.gguf_reader import (
    STRING,
    UINT32,
    Metadata,
    Scalar,
    TensorInfo,
    read_header,
    read_metadata,
    read_tensor_infos,
)
from gptoss_local.store.gguf_stream import Problem, Stream, show

__all__ = ["GgufError", "GgufInfo", "check_gguf"]

DEFAULT_ALIGNMENT = 32
MAX_SHARDS = 99_999  # llama.cpp names shards with five digits
_SHARD_NAME = re.compile(r"(?P<prefix>.+)-(?P<no>\d{5})-of-(?P<count>\d{5})\.gguf")


class GgufError(UserError):
    """A GGUF file is refused; the message names the file and says what to do about it."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path} {reason}")
        self.path, self.reason = path, reason


@dataclass(frozen=True)
class GgufInfo:
    """What the checker learnt about one file (the first shard of a split model).

    ``metadata`` holds the scalar and string values (strings over 64 KiB are left out) and
    ``value_types`` every key's GGUF type; arrays such as the vocabulary appear in
    ``array_lengths`` and ``array_types``, short numeric ones also in ``arrays``. ``tensors``
    lists the tensor infos of every shard.
    """

    path: Path
    version: int
    tensor_count: int
    kv_count: int
    architecture: str | None
    alignment: int
    data_offset: int
    file_size: int
    metadata: dict[str, Scalar]
    array_lengths: dict[str, int]
    split_count: int = 1
    value_types: dict[str, int] = field(default_factory=dict)
    array_types: dict[str, int] = field(default_factory=dict)
    arrays: dict[str, tuple[Scalar, ...]] = field(default_factory=dict)
    tensors: tuple[TensorInfo, ...] = ()


def check_gguf(
    path: str | Path, *, expect_architecture: str | None = "gpt-oss", check_shards: bool = True
) -> GgufInfo:
    """Checks that `path` is a well-formed GGUF that llama.cpp can safely parse.

    Args:
        path: The file, or the first shard (``<name>-00001-of-0000N.gguf``) of a split model.
        expect_architecture: Required ``general.architecture``; None accepts any (or none).
        check_shards: For a split model, also check that every other shard is present beside
            it and well-formed.

    Returns:
        The header facts and small metadata values of `path`.

    Raises:
        GgufError: The file (or a shard) is unreadable, damaged, truncated or the wrong model.
    """
    info = _check_one(Path(path), expect_architecture)
    if check_shards and info.split_count > 1:
        info = replace(info, tensors=info.tensors + _check_shards(info))
    return info


def _check_one(path: Path, expect_architecture: str | None) -> GgufInfo:
    try:
        with path.open("rb") as f:
            return _parse(path, f, os.fstat(f.fileno()).st_size, expect_architecture)
    except Problem as exc:
        raise GgufError(path, str(exc)) from None
    except FileNotFoundError:
        raise GgufError(path, _("does not exist")) from None
    except OSError as exc:
        raise GgufError(
            path, _("cannot be read: {error}").format(error=exc.strerror or exc)
        ) from None


def _parse(path: Path, f: BinaryIO, size: int, expect_architecture: str | None) -> GgufInfo:
    s = Stream(f, size)
    _check_magic(s)
    version, n_tensors, n_kv = read_header(s)
    meta = read_metadata(s, n_kv)
    alignment = _alignment(meta)
    split_count, split_index = _split(meta)
    if split_index > 0 and "general.architecture" not in meta.types:
        expect_architecture = None  # later shards need not repeat the architecture
    architecture = _architecture(meta, expect_architecture)
    tensors = read_tensor_infos(s, n_tensors)
    data_offset = -(-s.tell() // alignment) * alignment
    check_tensor_data(tensors, data_offset, alignment, size)
    return GgufInfo(
        path=path,
        version=version,
        tensor_count=n_tensors,
        kv_count=n_kv,
        architecture=architecture,
        alignment=alignment,
        data_offset=data_offset,
        file_size=size,
        metadata=meta.values,
        array_lengths=meta.array_lengths,
        split_count=split_count,
        value_types=meta.types,
        array_types=meta.array_types,
        arrays=meta.arrays,
        tensors=tuple(tensors),
    )


def _check_magic(s: Stream) -> None:
    if s.size == 0:
        raise Problem(_("is empty (0 bytes): the download did not finish; download it again"))
    start = s.read(min(4, s.size))
    if start == b"GGUF":
        return
    if b"GGUF".startswith(start):
        raise s.truncated()
    shown = "".join(chr(b) if 32 <= b < 127 else "?" for b in start)
    if start.startswith((b"<", b"{")):
        hint = _("the download may have saved an error page")
    elif start == b"vers":
        hint = _("it may be a Git LFS pointer rather than the model itself")
    else:
        hint = _("download it again")
    raise Problem(
        _("is not a GGUF file (it starts with '{start}'): {hint}").format(start=shown, hint=hint)
    )


def _alignment(meta: Metadata) -> int:
    key = "general.alignment"
    if key not in meta.types:
        return DEFAULT_ALIGNMENT
    value = meta.values.get(key)
    if meta.types[key] != UINT32 or not isinstance(value, int):
        raise Problem(_("is damaged: {key} is not a uint32").format(key=key))
    if value <= 0 or value & (value - 1):
        raise Problem(
            _("is damaged: {key} is {value}, which is not a power of two").format(
                key=key, value=value
            )
        )
    return value


def _architecture(meta: Metadata, expected: str | None) -> str | None:
    key = "general.architecture"
    arch = meta.values.get(key)
    if key in meta.types and (meta.types[key] != STRING or not isinstance(arch, str)):
        raise Problem(_("is damaged: {key} is not a short string").format(key=key))
    if expected is None or arch == expected:
        return arch if isinstance(arch, str) else None
    if arch is None:
        raise Problem(
            _("has no {key} key, so it is not a {expected} model").format(
                key=key, expected=expected
            )
        )
    if arch == "gptoss":
        raise Problem(
            _(
                "is an Ollama blob (architecture 'gptoss'): Ollama's own gpt-oss files use a "
                "different layout that llama.cpp cannot load; download the GGUF with "
                "`gptoss-local pull` instead"
            )
        )
    raise Problem(
        _("is a {found} model, not {expected}").format(found=show(str(arch)), expected=expected)
    )


def _split(meta: Metadata) -> tuple[int, int]:
    """Returns (shard count, this shard's index); a file that is not split is (1, 0)."""
    count, index = meta.values.get("split.count", 1), meta.values.get("split.no", 0)
    if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= MAX_SHARDS:
        raise Problem(_("is damaged: split.count is {count}").format(count=repr(count)))
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < count:
        raise Problem(
            _("is damaged: split.no is {index} but split.count is {count}").format(
                index=repr(index), count=count
            )
        )
    return count, index


def _shard_prefix(first: GgufInfo) -> str:
    """Returns the `<name>` of `<name>-00001-of-0000N.gguf`, where the other shards live."""
    count, index = first.split_count, int(first.metadata.get("split.no", 0))
    match = _SHARD_NAME.fullmatch(first.path.name)
    if index != 0:
        name = f"{match['prefix']}-00001-of-{count:05d}.gguf" if match else "the first shard"
        raise GgufError(
            first.path,
            _("is shard {shard} of {count}; check {name} instead").format(
                shard=index + 1, count=count, name=name
            ),
        )
    if not match or int(match["no"]) != 1 or int(match["count"]) != count:
        raise GgufError(
            first.path,
            _(
                "is the first of {count} shards, but its name does not end in "
                "-00001-of-{count:05d}.gguf, so the others cannot be found"
            ).format(count=count),
        )
    return match["prefix"]


def _check_shards(first: GgufInfo) -> tuple[TensorInfo, ...]:
    """Checks the other shards of a split model; returns their tensor infos."""
    count, prefix, total = first.split_count, _shard_prefix(first), first.tensor_count
    tensors: tuple[TensorInfo, ...] = ()
    for no in range(2, count + 1):
        shard = first.path.with_name(f"{prefix}-{no:05d}-of-{count:05d}.gguf")
        if not shard.is_file():
            raise GgufError(
                first.path,
                _(
                    "is shard 1 of {count}, but shard {no} ({name}) is missing beside it; "
                    "download all {count} shards"
                ).format(count=count, no=no, name=shard.name),
            )
        info = _check_one(shard, first.architecture)  # later shards may leave it out
        if (info.split_count, info.metadata.get("split.no")) != (count, no - 1):
            raise GgufError(
                shard,
                _(
                    "is not shard {no} of {count} of the same model; download all the shards again"
                ).format(no=no, count=count),
            )
        total += info.tensor_count
        tensors += info.tensors
    claimed = first.metadata.get("split.tensors.count", total)
    if claimed != total:
        raise GgufError(
            first.path,
            _(
                "says its {count} shards hold {claimed} tensors, but they hold "
                "{total}; some shard is from another download"
            ).format(count=count, claimed=claimed, total=total),
        )
    return tensors
