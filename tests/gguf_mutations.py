"""240 damaged copies of a valid gpt-oss GGUF, the same ones for the same seed.

Half are targeted value changes written back with a consistent structure (hyper-parameters,
key types, missing keys and tensors, the vocabulary arrays, the alignment), so they reach
llama.cpp's loader past any byte-level check; the rest are byte flips, overwrites and cuts
aimed at the header, the metadata and the tensor infos. ``python tests/gguf_mutations.py
MODEL.gguf OUT_DIR`` writes them out.
"""

from __future__ import annotations

import copy
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gguf_layout import ARRAY, STRING, Kv, Layout, parse, write

COUNT = 240
U32, I32, F32, BOOL, U64 = 4, 5, 6, 7, 10
ARCH = "gpt-oss"


@dataclass(frozen=True)
class Mutant:
    """One damaged file: a name that says what was done, and its bytes."""

    name: str
    data: bytes


Edit = Callable[[Layout], None]


def _set(key: str, value: object, vtype: int | None = None) -> Edit:
    def edit(layout: Layout) -> None:
        try:
            kv = layout.kv(key)
        except StopIteration:
            kv = Kv(key, vtype if vtype is not None else U32, value)
            layout.kvs.append(kv)
        kv.value = value
        if vtype is not None:
            kv.vtype = vtype
        if vtype == ARRAY:
            kv.etype = U32

    return edit


def _drop_key(key: str) -> Edit:
    return lambda layout: layout.kvs.remove(layout.kv(key))


def _drop_tensor(name: str) -> Edit:
    return lambda layout: layout.tensors.remove(next(t for t in layout.tensors if t.name == name))


def _array(key: str, change: Callable[[list[object]], list[object]]) -> Edit:
    def edit(layout: Layout) -> None:
        kv = layout.kv(key)
        kv.value = change(list(kv.value))  # type: ignore[call-overload]

    return edit


def _tensor(name: str, change: Callable[[list[int]], list[int]], ggml_type: int = -1) -> Edit:
    def edit(layout: Layout) -> None:
        t = next(t for t in layout.tensors if t.name == name)
        t.dims = change(list(t.dims))
        t.ggml_type = t.ggml_type if ggml_type < 0 else ggml_type

    return edit


def _align(declared: int, used: int) -> Edit:
    def edit(layout: Layout) -> None:
        _set("general.alignment", declared)(layout)
        layout.alignment = used

    return edit


def _hparams() -> list[tuple[str, Edit]]:
    table: dict[str, list[object]] = {
        "expert_count": [0, 1, 2, 3, 8, 1025, 2**32 - 1],
        "expert_used_count": [0, 3, 5, 100],
        "attention.head_count": [0, 1, 2, 3, 8, 2**20],
        "attention.head_count_kv": [0, 1, 3, 4, 8],
        "block_count": [0, 1, 3, 513, 2**32 - 1],
        "context_length": [0, 1, 2**32 - 1],
        "embedding_length": [0, 32, 128],
        "attention.key_length": [0, 8, 32],
        "attention.value_length": [0, 32],
        "attention.sliding_window": [0, 1, 2**32 - 1],
        "expert_feed_forward_length": [0, 32, 128],
        "feed_forward_length": [0, 2**32 - 1],
    }
    edits = [(f"{k}={v}", _set(f"{ARCH}.{k}", v)) for k, vs in table.items() for v in vs]
    floats = {"rope.freq_base": [0.0, float("nan"), -1.0], "rope.scaling.factor": [-4.0]}
    floats["attention.layer_norm_rms_epsilon"] = [0.0, float("nan")]
    edits += [(f"{k}={v}", _set(f"{ARCH}.{k}", v, F32)) for k, vs in floats.items() for v in vs]
    edits += [("rope.scaling.type=foo", _set(f"{ARCH}.rope.scaling.type", "foo", STRING))]
    return edits


def _key_types() -> list[tuple[str, Edit]]:
    key = f"{ARCH}.expert_used_count"
    return [
        ("expert_count as i32", _set(f"{ARCH}.expert_count", 4, I32)),
        ("expert_count as f32", _set(f"{ARCH}.expert_count", 4.0, F32)),
        ("head_count as string", _set(f"{ARCH}.attention.head_count", "4", STRING)),
        ("block_count as u64", _set(f"{ARCH}.block_count", 2, U64)),
        ("block_count as bool", _set(f"{ARCH}.block_count", True, BOOL)),
        ("expert_used_count per layer", _set(key, [2, 2], ARRAY)),
        ("expert_used_count per layer, too long", _set(key, [2, 2, 2], ARRAY)),
        ("expert_used_count per layer, too many", _set(key, [2, 9], ARRAY)),
        ("head_count_kv per layer, zero", _set(f"{ARCH}.attention.head_count_kv", [2, 0], ARRAY)),
        ("sliding_window as f32", _set(f"{ARCH}.attention.sliding_window", 128.0, F32)),
    ]


def _missing() -> list[tuple[str, Edit]]:
    keys = ["block_count", "embedding_length", "attention.head_count", "expert_count"]
    keys += ["expert_used_count", "context_length", "attention.sliding_window"]
    keys += ["expert_feed_forward_length", "attention.layer_norm_rms_epsilon"]
    edits = [(f"no {ARCH}.{k}", _drop_key(f"{ARCH}.{k}")) for k in keys]
    for key in ("general.architecture", "tokenizer.ggml.tokens", "tokenizer.ggml.model"):
        edits.append((f"no {key}", _drop_key(key)))
    for name in ("token_embd.weight", "output.weight", "blk.1.attn_sinks.weight"):
        edits.append((f"no tensor {name}", _drop_tensor(name)))
    edits.append(("no tensor blk.0.ffn_up_exps.weight", _drop_tensor("blk.0.ffn_up_exps.weight")))
    return edits


def _vocab() -> list[tuple[str, Edit]]:
    tokens, types, merges = (f"tokenizer.ggml.{k}" for k in ("tokens", "token_type", "merges"))
    edits: list[tuple[str, Edit]] = [
        ("tokens one short", _array(tokens, lambda v: v[:-1])),
        ("tokens cut to 16", _array(tokens, lambda v: v[:16])),
        ("tokens one more", _array(tokens, lambda v: [*v, "extra"])),
        ("token types one short", _array(types, lambda v: v[:-1])),
        ("token type 99", _array(types, lambda v: [99, *v[1:]])),
        ("token type 0 everywhere", _array(types, lambda v: [0] * len(v))),
        ("empty token", _array(tokens, lambda v: ["", *v[1:]])),
        ("duplicate tokens", _array(tokens, lambda v: [v[1], *v[1:]])),
        ("merge without space", _array(merges, lambda v: ["ab", *v[1:]])),
        ("merge of unknown tokens", _array(merges, lambda v: ["qqq zzz", *v[1:]])),
        ("merges empty", _array(merges, lambda v: [])),
        ("tokenizer model foo", _set("tokenizer.ggml.model", "foo", STRING)),
        ("tokenizer model llama", _set("tokenizer.ggml.model", "llama", STRING)),
        ("tokenizer pre foo", _set("tokenizer.ggml.pre", "foo", STRING)),
    ]
    for which in ("bos", "eos", "padding"):
        key = f"tokenizer.ggml.{which}_token_id"
        edits += [(f"{which} id {v}", _set(key, v)) for v in (512, 2**31, 2**32 - 1)]
    return edits


def _tensor_edits() -> list[tuple[str, Edit]]:
    return [
        ("token_embd wider", _tensor("token_embd.weight", lambda d: [d[0] * 2, d[1]])),
        ("token_embd 3-d", _tensor("token_embd.weight", lambda d: [*d, 1])),
        ("attn_q as F16", _tensor("blk.0.attn_q.weight", lambda d: d, 1)),
        ("gate_exps as Q4_0", _tensor("blk.0.ffn_gate_exps.weight", lambda d: d, 2)),
        ("output as F32", _tensor("output.weight", lambda d: d, 0)),
        ("attn_norm as F16", _tensor("blk.0.attn_norm.weight", lambda d: d, 1)),
        ("attn_output.bias as BF16", _tensor("blk.1.attn_output.bias", lambda d: d, 30)),
        ("up_exps as I32", _tensor("blk.0.ffn_up_exps.weight", lambda d: d, 26)),
        ("token_embd as I8", _tensor("token_embd.weight", lambda d: d, 24)),
        ("attn_v as Q8_1", _tensor("blk.1.attn_v.weight", lambda d: d, 9)),
        ("sinks twice as long", _tensor("blk.0.attn_sinks.weight", lambda d: [d[0] * 2])),
        ("up_exps one expert less", _tensor("blk.1.ffn_up_exps.weight", lambda d: [*d[:2], 3])),
        ("alignment 64", _align(64, 64)),
        ("alignment 8", _align(8, 8)),
        ("alignment 1", _align(1, 1)),
        ("alignment 64, laid out at 32", _align(64, 32)),
        ("alignment 8, laid out at 32", _align(8, 32)),
    ]


def targeted() -> list[tuple[str, Edit]]:
    """The value changes, each written back as an otherwise well-formed file."""
    return _hparams() + _key_types() + _missing() + _vocab() + _tensor_edits()


def _byte_mutant(raw: bytes, layout: Layout, rng: random.Random) -> tuple[str, bytes]:
    data, t = bytearray(raw), rng.choice(layout.tensors)
    kv = rng.choice(layout.kvs)
    spots = {
        "header": rng.randrange(4, 24),
        "kv key length": kv.start + rng.randrange(8),
        "kv type": kv.value_at - 4 + rng.randrange(4),
        "kv value": kv.value_at + rng.randrange(8 if kv.vtype != ARRAY else 12),
        "tensor n_dims": t.n_dims_at + rng.randrange(4),
        "tensor dim": t.n_dims_at + 4 + rng.randrange(8 * len(t.dims)),
        "tensor type": t.type_at + rng.randrange(4),
        "tensor offset": t.offset_at + rng.randrange(8),
        "metadata": rng.randrange(24, layout.infos_end),
    }
    where = rng.choice([*spots, "cut"])
    if where == "cut":
        # Mostly inside the header and tensor infos, where a cut is not just missing data.
        at = rng.randrange(layout.data_offset + 64 if rng.random() < 0.7 else len(raw))
        return f"cut at {at}", raw[:at]
    at = spots[where]
    if rng.random() < 0.5:
        bit = rng.randrange(8)
        data[at] ^= 1 << bit
        return f"{where}: bit {bit} of byte {at}", bytes(data)
    value = rng.choice([0, 0xFF, 0x7F, 0x80, rng.randrange(256)])
    data[at] = value
    return f"{where}: byte {at} = {value:#04x}", bytes(data)


def mutants(raw: bytes, seed: int = 20240805, count: int = COUNT) -> list[Mutant]:
    """The damaged copies of `raw` (a valid gpt-oss GGUF), named ``NNN-what``."""
    rng, layout = random.Random(seed), parse(raw)
    out: list[tuple[str, bytes]] = []
    for name, edit in targeted()[:count]:
        changed = copy.deepcopy(layout)
        edit(changed)
        out.append((name, write(changed)))
    while len(out) < count:
        name, data = _byte_mutant(raw, layout, rng)
        if data != raw:  # an overwrite with the same value is no mutant
            out.append((name, data))
    return [Mutant(f"{i:03d}-{name}", data) for i, (name, data) in enumerate(out)]


def write_corpus(model: Path, folder: Path, **kwargs: int) -> dict[str, Path]:
    """Writes the mutants of `model` into `folder` as ``NNN.gguf``; returns name -> path."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for m in mutants(model.read_bytes(), **kwargs):
        paths[m.name] = folder / f"{m.name[:3]}.gguf"
        paths[m.name].write_bytes(m.data)
    return paths


if __name__ == "__main__":
    for name, path in write_corpus(Path(sys.argv[1]), Path(sys.argv[2])).items():
        print(f"{path}\t{name}")
