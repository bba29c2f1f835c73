"""A small GGUF parser and writer for building damaged files on purpose.

It records where every field sits (so a mutation can hit exactly one byte of it) and writes a
parsed file back out, re-packing the tensor data, so a value can be changed without breaking
the rest of the structure. Only for the test files this project writes: it trusts its input.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

STRING, ARRAY = 8, 9
# GGUF value type -> struct format (bool is one byte; STRING and ARRAY are handled apart).
SCALAR_FORMATS = {t: "<" + f for t, f in enumerate("BbHhIif?xxQqd") if f != "x"}
# ggml type -> (values per block, bytes per block), for the types the synthetic files use
# and the few a mutation swaps in.
BLOCKS = {0: (1, 4), 1: (1, 2), 2: (32, 18), 8: (32, 34), 9: (32, 36), 24: (1, 1), 26: (1, 4)}
BLOCKS |= {30: (1, 2), 39: (32, 17)}


@dataclass
class Kv:
    """One metadata entry; `value` is a scalar, a str, or a list for arrays (`etype` set)."""

    key: str
    vtype: int
    value: object
    etype: int = -1
    start: int = 0  # where the entry's key length begins
    value_at: int = 0  # where the value (for arrays: the element type) begins


@dataclass
class Tensor:
    """One tensor info with its data; `*_at` are the byte positions of each field."""

    name: str
    dims: list[int]
    ggml_type: int
    offset: int
    data: bytes = b""
    start: int = 0
    n_dims_at: int = 0
    type_at: int = 0
    offset_at: int = 0

    @property
    def nbytes(self) -> int:
        per_block, block_bytes = BLOCKS.get(self.ggml_type, (1, 4))
        count = 1
        for d in self.dims:
            count *= d
        return count // per_block * block_bytes


@dataclass
class Layout:
    """A parsed GGUF file."""

    version: int
    kvs: list[Kv]
    tensors: list[Tensor]
    alignment: int = 32
    infos_end: int = 0
    data_offset: int = 0
    extra: dict[str, int] = field(default_factory=dict)

    def kv(self, key: str) -> Kv:
        return next(k for k in self.kvs if k.key == key)


class _Reader:
    def __init__(self, raw: bytes) -> None:
        self.raw, self.pos = raw, 0

    def take(self, fmt: str) -> int | float | bool:
        (value,) = struct.unpack_from(fmt, self.raw, self.pos)
        self.pos += struct.calcsize(fmt)
        return value  # type: ignore[no-any-return]

    def string(self) -> str:
        n = int(self.take("<Q"))
        self.pos += n
        return self.raw[self.pos - n : self.pos].decode("utf-8", "replace")

    def value(self, vtype: int) -> object:
        return self.string() if vtype == STRING else self.take(SCALAR_FORMATS[vtype])


def parse(raw: bytes) -> Layout:
    """Parses a well-formed GGUF file (the synthetic writer's output)."""
    r = _Reader(raw)
    assert raw[:4] == b"GGUF"
    r.pos = 4
    version, n_tensors, n_kv = int(r.take("<I")), int(r.take("<Q")), int(r.take("<Q"))
    kvs = [_parse_kv(r) for _ in range(n_kv)]
    tensors = [_parse_tensor(r) for _ in range(n_tensors)]
    layout = Layout(version, kvs, tensors, infos_end=r.pos)
    align = next((k.value for k in kvs if k.key == "general.alignment"), 32)
    layout.alignment = int(align)  # type: ignore[call-overload]
    layout.data_offset = -(-r.pos // layout.alignment) * layout.alignment
    for t in tensors:
        start = layout.data_offset + t.offset
        t.data = raw[start : start + t.nbytes]
    return layout


def _parse_kv(r: _Reader) -> Kv:
    start = r.pos
    key, vtype = r.string(), int(r.take("<i"))
    value_at = r.pos
    if vtype != ARRAY:
        return Kv(key, vtype, r.value(vtype), start=start, value_at=value_at)
    etype, count = int(r.take("<i")), int(r.take("<Q"))
    items = [r.value(etype) for _ in range(count)]
    return Kv(key, vtype, items, etype, start, value_at)


def _parse_tensor(r: _Reader) -> Tensor:
    start = r.pos
    name = r.string()
    n_dims_at = r.pos
    dims = [int(r.take("<q")) for _ in range(int(r.take("<I")))]
    type_at = r.pos
    ggml_type = int(r.take("<i"))
    offset_at = r.pos
    offset = int(r.take("<Q"))
    return Tensor(name, dims, ggml_type, offset, b"", start, n_dims_at, type_at, offset_at)


def _string(text: str) -> bytes:
    raw = text.encode()
    return struct.pack("<Q", len(raw)) + raw


def _value(vtype: int, value: object) -> bytes:
    if vtype == STRING:
        return _string(str(value))
    return struct.pack(SCALAR_FORMATS[vtype], value)


def _kv_bytes(k: Kv) -> bytes:
    head = _string(k.key) + struct.pack("<i", k.vtype)
    if k.vtype != ARRAY:
        return head + _value(k.vtype, k.value)
    items = list(k.value)  # type: ignore[call-overload]
    body = b"".join(_value(k.etype, v) for v in items)
    return head + struct.pack("<iQ", k.etype, len(items)) + body


def write(layout: Layout, *, repack: bool = True) -> bytes:
    """Serialises `layout`; with `repack`, offsets follow the data (resized to each shape)."""
    alignment, offset = layout.alignment, 0
    for t in layout.tensors:
        if repack:
            t.data = (t.data + bytes(max(0, t.nbytes - len(t.data))))[: t.nbytes]
            t.offset = offset
            offset += -(-len(t.data) // alignment) * alignment
    head = b"GGUF" + struct.pack("<IQQ", layout.version, len(layout.tensors), len(layout.kvs))
    head += b"".join(_kv_bytes(k) for k in layout.kvs)
    for t in layout.tensors:
        dims = struct.pack(f"<I{len(t.dims)}q", len(t.dims), *t.dims)
        head += _string(t.name) + dims + struct.pack("<iQ", t.ggml_type, t.offset)
    start = len(head) + (-len(head) % alignment)
    end = max((start + t.offset + len(t.data) for t in layout.tensors), default=start)
    out = bytearray(head) + bytes(end - len(head))
    for t in layout.tensors:
        out[start + t.offset : start + t.offset + len(t.data)] = t.data
    return bytes(out + bytes(-len(out) % alignment))
