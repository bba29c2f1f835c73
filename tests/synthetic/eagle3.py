"""A random-weight EAGLE-3 draft head for a synthetic gpt-oss target, in llama.cpp's layout.

An EAGLE-3 head is one Llama-style decoder layer that reads three of the target's hidden
states (`target_layers`, fused by `fc`) beside the embedding of the next token, and predicts
the token after it. It borrows the target's token embeddings; its own output layer covers a
smaller draft vocabulary mapped to target ids by `d2t` (or the whole vocabulary, without one).
Published heads for gpt-oss have the target's width (2880), 64 heads of 64, 8 KV heads, a
17,280-wide feed-forward, a 32,000-token draft vocabulary and read target layers near the
bottom, middle and top.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from synthetic.shapes import SyntheticShape
from synthetic.writer import _add_tokenizer


@dataclass(frozen=True)
class EagleShape:
    """The head's own sizes; its width is the target's (they share the token embeddings)."""

    heads: int
    kv_heads: int
    head_dim: int
    ff: int
    draft_vocab: int  # 0: the target's whole vocabulary, no d2t map
    dtype: str = "F32"  # or "F16", as published heads are converted

    def __post_init__(self) -> None:
        if self.heads % self.kv_heads:
            raise ValueError("heads must be a multiple of kv_heads")


TINY_EAGLE = EagleShape(heads=4, kv_heads=2, head_dim=16, ff=128, draft_vocab=0)
GPT_OSS_EAGLE = EagleShape(heads=64, kv_heads=8, head_dim=64, ff=17280, draft_vocab=32000,
                           dtype="F16")  # fmt: skip


def default_layers(target: SyntheticShape) -> list[int]:
    """Low, middle and high layers, as EAGLE-3 training picks them by default."""
    return [min(2, target.layers - 1), target.layers // 2, max(target.layers - 3, 0)]


def write_eagle3(
    path: str | Path,
    target: SyntheticShape,
    shape: EagleShape = TINY_EAGLE,
    seed: int = 0,
    layers: Sequence[int] | None = None,
    draft_ids: Sequence[int] | None = None,
    tokenizer: object = None,
) -> Path:
    """Write an EAGLE-3 head for `target` to `path`.

    Args:
        layers: The three target layers read (default: `default_layers`).
        draft_ids: Target token ids of the draft vocabulary (its d2t map); default: the first
            `shape.draft_vocab` ids. With a single id the head always proposes that token.
        tokenizer: As `write_gguf`'s: the target's vocabulary, if not the synthetic one.
    """
    import gguf
    import numpy as np

    rng = np.random.default_rng(seed)
    width = target.hidden
    if draft_ids is None and shape.draft_vocab:
        draft_ids = range(shape.draft_vocab)
    out_rows = len(draft_ids) if draft_ids is not None else target.vocab_size
    read = list(layers) if layers is not None else default_layers(target)
    if len(read) != 3 or not all(0 <= layer < target.layers for layer in read):
        raise ValueError(f"three target layers below {target.layers} are needed, not {read}")
    writer = gguf.GGUFWriter(Path(path), "eagle3")
    writer.add_name(f"synthetic EAGLE-3 head for {target.name}")
    writer.add_context_length(target.context_length)
    writer.add_embedding_length(width)
    writer.add_block_count(1)
    writer.add_feed_forward_length(shape.ff)
    writer.add_head_count(shape.heads)
    writer.add_head_count_kv(shape.kv_heads)
    writer.add_key_length(shape.head_dim)
    writer.add_value_length(shape.head_dim)
    writer.add_rope_freq_base(target.rope_base)
    writer.add_layer_norm_rms_eps(target.rms_eps)
    writer.add_array("eagle3.target_layers", read)
    writer.add_uint32("eagle3.target_hidden_size", width)
    if tokenizer is None:
        _add_tokenizer(writer, target)
    else:
        tokenizer(writer)  # type: ignore[operator]
    dtype = np.float16 if shape.dtype == "F16" else np.float32

    def weight(rows: int, columns: int) -> np.ndarray:  # ggml {columns, rows}: rows of `columns`
        scale = 1.0 / math.sqrt(columns)
        return (rng.standard_normal((rows, columns), dtype=np.float32) * scale).astype(dtype)

    def norm(size: int) -> np.ndarray:
        return (1.0 + 0.02 * rng.standard_normal(size)).astype(np.float32)

    q, kv = shape.heads * shape.head_dim, shape.kv_heads * shape.head_dim
    tensors = {
        "fc.weight": weight(width, 3 * width),
        "blk.0.attn_norm.weight": norm(width),
        "blk.0.attn_norm_2.weight": norm(width),
        "blk.0.attn_q.weight": weight(q, 2 * width),
        "blk.0.attn_k.weight": weight(kv, 2 * width),
        "blk.0.attn_v.weight": weight(kv, 2 * width),
        "blk.0.attn_output.weight": weight(width, q),
        "blk.0.ffn_norm.weight": norm(width),
        "blk.0.ffn_gate.weight": weight(shape.ff, width),
        "blk.0.ffn_up.weight": weight(shape.ff, width),
        "blk.0.ffn_down.weight": weight(width, shape.ff),
        "output_norm.weight": norm(width),
        "output.weight": weight(out_rows, width),
    }
    for name, data in tensors.items():
        writer.add_tensor(name, data)
    if draft_ids is not None:
        writer.add_tensor("d2t", np.asarray(list(draft_ids), dtype=np.int64))
    try:
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
    finally:
        writer.close()
    return Path(path)
