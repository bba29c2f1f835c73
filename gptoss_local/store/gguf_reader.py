"""Bounded, streaming parse of a GGUF file's header, metadata and tensor infos.

Nothing here reads tensor data or trusts a length from the file: every count and size is
checked against a fixed limit and against the bytes actually left before it is used.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import TypeAlias

from gptoss_local.i18n import _
from gptoss_local.store.ggml_types import GGML_TYPES
from gptoss_local.store.gguf_stream import Problem, Stream, show

Scalar: TypeAlias = int | float | bool | str

MAX_TENSORS = 1_000_000
MAX_KEYS = 100_000
MAX_KEY_BYTES = 64 * 1024  # also the read limit for tensor names
MAX_VALUE_BYTES = 1024 * 1024
MAX_ARRAY_VALUES = 1 << 30  # llama.cpp's GGUF_MAX_ARRAY_ELEMENTS
# Each string is walked in Python; real vocabularies and merge lists are well under 1M.
MAX_STRING_ARRAY_VALUES = 1 << 24
# Numeric arrays this short (llama.cpp's per-layer values: at most LLAMA_MAX_LAYERS) are kept.
KEEP_ARRAY_VALUES = 512
# The vocabulary: a repeated token makes llama.cpp abort (GGML_ASSERT in llama-vocab.cpp).
UNIQUE_STRINGS_KEY = "tokenizer.ggml.tokens"
MAX_DIMS = 4  # GGML_MAX_DIMS
MAX_NAME_BYTES = 63  # GGML_MAX_NAME is 64 with the terminating NUL
# Smallest possible encodings: header; key (8 + 1) + type (4) + a uint8; name (8 + 1) +
# n_dims (4) + one dim (8) + type (4) + offset (8).
HEADER_BYTES, MIN_KV_BYTES, MIN_TENSOR_INFO_BYTES = 24, 14, 33

_KEEP_STRING_BYTES = 64 * 1024  # longer string values are checked but not kept
_KEEP_TOTAL_BYTES = 16 * 1024 * 1024
_INT64_MAX = (1 << 63) - 1

UINT32, BOOL, STRING, ARRAY = 4, 7, 8, 9
_U32, _I32, _U64, _I64 = (struct.Struct(f) for f in ("<I", "<i", "<Q", "<q"))
# GGUF value type id -> encoding, for every type but STRING and ARRAY (bool is one byte).
_SCALARS = {t: struct.Struct("<" + f) for t, f in enumerate("BbHhIif?xxQqd") if f != "x"}


@dataclass
class Metadata:
    """The key/value section: small values kept, arrays reduced to their length."""

    values: dict[str, Scalar] = field(default_factory=dict)
    array_lengths: dict[str, int] = field(default_factory=dict)
    types: dict[str, int] = field(default_factory=dict)
    array_types: dict[str, int] = field(default_factory=dict)
    arrays: dict[str, tuple[Scalar, ...]] = field(default_factory=dict)  # short numeric ones
    kept_bytes: int = 0


@dataclass(frozen=True, slots=True)
class TensorInfo:
    name: str
    offset: int  # from the start of the data section
    nbytes: int
    dims: tuple[int, ...] = (1,)  # ggml order: the row length first
    ggml_type: int = 0


def read_header(s: Stream) -> tuple[int, int, int]:
    """Reads version, tensor count and key count after the magic; refuses unusable values."""
    version = s.integer(_U32)
    if version == 1:
        raise Problem(_("is GGUF version 1, which llama.cpp no longer loads; get a current GGUF"))
    if version not in (2, 3):
        big_endian = version != 0 and version & 0xFFFF == 0
        unknown = (
            _(
                "has unknown GGUF version {version} (2 and 3 are known): it is a big-endian "
                "GGUF, which this PC cannot load"
            )
            if big_endian
            else _("has unknown GGUF version {version} (2 and 3 are known): it is damaged")
        )
        raise Problem(unknown.format(version=version))
    n_tensors, n_kv = s.integer(_U64), s.integer(_U64)
    for count, what, limit in ((n_tensors, "tensors", MAX_TENSORS), (n_kv, "keys", MAX_KEYS)):
        if count > limit:
            raise Problem(
                f"is damaged: its header claims {count:,} {what} (the limit is {limit:,})"
            )
    need = HEADER_BYTES + n_kv * MIN_KV_BYTES + n_tensors * MIN_TENSOR_INFO_BYTES
    if need > s.size:
        raise Problem(
            f"is damaged or truncated: its header claims {n_tensors:,} tensors and {n_kv:,} keys, "
            f"which need at least {need:,} bytes, but the file has {s.size:,}; download it again"
        )
    return version, n_tensors, n_kv


def _string_length(s: Stream, limit: int, what: str) -> int:
    n = s.integer(_U64)
    if n > limit or n > s.remaining():
        raise _bad_string(s, n, limit, what)
    return n


def _bad_string(s: Stream, n: int, limit: int, what: str) -> Problem:
    if n > limit:
        return Problem(
            f"is damaged: {what} claims a string of {n:,} bytes (the limit is {limit:,})"
        )
    return Problem(
        f"is damaged or truncated: {what} claims a string of {n:,} bytes but only "
        f"{s.remaining():,} bytes are left in the file; download it again"
    )


def _name(s: Stream, what: str) -> bytes:
    return s.read(_string_length(s, MAX_KEY_BYTES, f"the name of {what}"))


def read_metadata(s: Stream, n_kv: int) -> Metadata:
    """Reads `n_kv` key/value pairs, checking every type, length and key."""
    meta, seen = Metadata(), set()
    for i in range(n_kv):
        s.where = f"the metadata (key #{i})"
        raw = _name(s, f"metadata key #{i}")
        key = raw.decode("utf-8", "replace")
        if not raw or raw in seen:
            problem = "has an empty name" if not raw else f"{show(key)} appears twice"
            raise Problem(f"is damaged: metadata key #{i} {problem}")
        seen.add(raw)
        s.where, what = f"the metadata (key {show(key)})", f"metadata key {show(key)}"
        meta.types[key] = vtype = s.integer(_I32)
        if vtype == ARRAY:
            meta.array_lengths[key] = _read_array(s, meta, key, what)
        else:
            _keep(meta, key, _scalar(s, vtype, what))
    return meta


def _keep(meta: Metadata, key: str, value: Scalar | None) -> None:
    size = len(value) if isinstance(value, str) else 8
    if value is not None and meta.kept_bytes + size <= _KEEP_TOTAL_BYTES:
        meta.values[key] = value
        meta.kept_bytes += size


def _scalar(s: Stream, vtype: int, what: str) -> Scalar | None:
    if vtype == STRING:
        n = _string_length(s, MAX_VALUE_BYTES, what)
        if n > _KEEP_STRING_BYTES:
            s.skip(n)
            return None
        return s.read(n).decode("utf-8", "replace")
    fmt = _SCALARS.get(vtype)
    if fmt is None:
        raise Problem(f"is damaged: {what} has unknown value type {vtype} (GGUF knows 0 to 12)")
    value = s.unpack(fmt)
    return bool(value) if vtype == BOOL else value


def _read_array(s: Stream, meta: Metadata, key: str, what: str) -> int:
    """Checks an array and returns its length; keeps the values of short numeric ones."""
    etype, count = s.integer(_I32), s.integer(_U64)
    if etype == ARRAY:
        raise Problem(f"is not loadable: {what} is an array of arrays, which llama.cpp refuses")
    if etype != STRING and etype not in _SCALARS:
        raise Problem(f"is damaged: {what} is an array of unknown value type {etype}")
    size = 8 if etype == STRING else _SCALARS[etype].size  # a string is at least its length
    limit = MAX_STRING_ARRAY_VALUES if etype == STRING else MAX_ARRAY_VALUES
    if count > limit:
        raise Problem(f"is damaged: {what} claims {count:,} values (the limit is {limit:,})")
    if count * size > s.remaining():
        raise Problem(
            f"is damaged or truncated: {what} claims an array of {count:,} values, which needs "
            f"at least {count * size:,} bytes, but only {s.remaining():,} are left in the file"
        )
    meta.array_types[key] = etype
    if etype != STRING and count <= KEEP_ARRAY_VALUES:
        fmt = _SCALARS[etype]
        meta.arrays[key] = tuple(s.unpack(fmt) for _i in range(count))
    elif etype != STRING:
        s.skip(count * size)
    elif bad := s.skip_strings(count, MAX_VALUE_BYTES, unique=key == UNIQUE_STRINGS_KEY):
        if bad[1] < 0:
            raise Problem(f"is damaged: {what} repeats an earlier token at #{bad[0]}")
        raise _bad_string(s, bad[1], MAX_VALUE_BYTES, f"{what} (element #{bad[0]})")
    return count


def read_tensor_infos(s: Stream, n_tensors: int) -> list[TensorInfo]:
    """Reads the tensor infos; checks names, shapes and types (offsets are checked later)."""
    infos: list[TensorInfo] = []
    seen: set[bytes] = set()
    for i in range(n_tensors):
        s.where = f"the tensor infos (tensor #{i})"
        raw = _name(s, f"tensor #{i}")
        label = f"tensor {show(raw.decode('utf-8', 'replace'))}"
        if len(raw) > MAX_NAME_BYTES:
            raise Problem(f"is not loadable: {label} has a {len(raw)}-byte name (llama.cpp: 63)")
        if raw in seen:
            raise Problem(f"is damaged: {label} appears twice")
        seen.add(raw)
        s.where = f"the tensor infos ({label})"
        dims, type_id, nbytes = _tensor_shape(s, label)
        name = raw.decode("utf-8", "replace")
        infos.append(TensorInfo(name, s.integer(_U64), nbytes, dims, type_id))
    return infos


def _tensor_shape(s: Stream, label: str) -> tuple[tuple[int, ...], int, int]:
    """Reads n_dims, the dims and the type; returns (dims, type id, data bytes)."""
    n_dims = s.integer(_U32)
    if not 1 <= n_dims <= MAX_DIMS:
        raise Problem(f"is damaged: {label} has {n_dims} dimensions (1 to {MAX_DIMS} are allowed)")
    dims = [s.integer(_I64) for _i in range(n_dims)]
    count = 1
    for d in dims:
        count *= d
        if d <= 0 or count > _INT64_MAX:
            raise Problem(f"is damaged: {label} has the impossible shape {dims}")
    type_id = s.integer(_I32)
    if type_id not in GGML_TYPES:
        raise Problem(
            f"is not loadable: {label} has unknown ggml type {type_id}; the file is damaged "
            "or needs a newer llama.cpp"
        )
    type_name, block, block_bytes = GGML_TYPES[type_id]
    if dims[0] % block:
        raise Problem(
            f"is damaged: {label} has {dims[0]} values per row, not a multiple of "
            f"the {type_name} block size {block}"
        )
    return tuple(dims), type_id, count // block * block_bytes
