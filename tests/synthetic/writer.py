"""Streams a random-weight gpt-oss GGUF to disk, one tensor at a time."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from synthetic.plan import BLOCK_LAYOUT, TensorPlan, plan_tensors
from synthetic.shapes import TINY, SyntheticShape
from synthetic.vocab import build_vocab

if TYPE_CHECKING:
    import numpy as np

Progress = Callable[[int, int], None]

# E8M0 exponents 118..122 give MXFP4 weights of at most 12 * 2**-6; 0xFF would be NaN.
_MXFP4_EXPONENTS = (118, 123)
# Extra blocks in each pool so tensors can start at different random offsets.
_POOL_SLACK_BLOCKS = 1 << 16


class _RandomBlocks:
    """Per-type pools of valid random quant blocks; tensors are views into them.

    One pool per quant type, as large as the biggest tensor of that type, keeps
    memory bounded (about 0.8 GB for 20b) and makes a 12 GB write disk-bound.
    """

    def __init__(self, plan: list[TensorPlan], hidden: int, seed: int) -> None:
        import numpy as np

        self._np = np
        self._rng = np.random.default_rng(seed)
        self._hidden = hidden
        self._pools: dict[str, np.ndarray] = {}
        for dtype in ("Q8_0", "MXFP4"):
            sizes = [t.nbytes // BLOCK_LAYOUT[dtype][1] for t in plan if t.dtype == dtype]
            self._pools[dtype] = self._make_pool(dtype, max(sizes) + _POOL_SLACK_BLOCKS)

    def _make_pool(self, dtype: str, n_blocks: int) -> np.ndarray:
        np, rng = self._np, self._rng
        block_bytes = BLOCK_LAYOUT[dtype][1]
        pool = rng.integers(0, 256, size=(n_blocks, block_bytes), dtype=np.uint8)
        if dtype == "MXFP4":
            pool[:, 0] = rng.integers(*_MXFP4_EXPONENTS, size=n_blocks, dtype=np.uint8)
        else:
            # int8 quants have std ~74; this f16 scale gives weights of std ~1/sqrt(hidden)
            # so activations neither vanish nor blow up through the random layers.
            base = 1.0 / (74.0 * math.sqrt(self._hidden))
            scales = (base * rng.uniform(0.5, 1.5, size=n_blocks)).astype("<f2")
            pool[:, :2] = scales.view(np.uint8).reshape(n_blocks, 2)
        return pool.reshape(-1)

    def data(self, tensor: TensorPlan) -> np.ndarray:
        """Returns random bytes (quant types) or floats (F32) for ``tensor``."""
        if tensor.dtype == "F32":
            return self._f32(tensor)
        pool, block_bytes = self._pools[tensor.dtype], BLOCK_LAYOUT[tensor.dtype][1]
        spare_blocks = pool.size // block_bytes - tensor.nbytes // block_bytes
        start = int(self._rng.integers(0, spare_blocks + 1)) * block_bytes
        return pool[start : start + tensor.nbytes]

    def _f32(self, tensor: TensorPlan) -> np.ndarray:
        np, rng = self._np, self._rng
        size = tensor.nbytes // 4
        if tensor.name.endswith("norm.weight"):
            return (1.0 + 0.02 * rng.standard_normal(size)).astype(np.float32)
        if tensor.name.endswith("ffn_gate_inp.weight"):
            # Router logits of order 1 spread tokens over all experts.
            return (rng.standard_normal(size) / math.sqrt(self._hidden)).astype(np.float32)
        return (0.02 * rng.standard_normal(size)).astype(np.float32)


def _add_hparams(writer: Any, shape: SyntheticShape) -> None:
    import gguf

    writer.add_name(f"synthetic gpt-oss {shape.name}")
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_MXFP4_MOE)
    writer.add_quantization_version(gguf.GGML_QUANT_VERSION)
    writer.add_context_length(shape.context_length)
    writer.add_embedding_length(shape.hidden)
    writer.add_block_count(shape.layers)
    writer.add_feed_forward_length(shape.expert_ff)
    writer.add_head_count(shape.heads)
    writer.add_head_count_kv(shape.kv_heads)
    # llama.cpp would otherwise derive head_dim as hidden / heads, which is wrong here.
    writer.add_key_length(shape.head_dim)
    writer.add_value_length(shape.head_dim)
    writer.add_rope_freq_base(shape.rope_base)
    writer.add_layer_norm_rms_eps(shape.rms_eps)
    writer.add_expert_count(shape.experts)
    writer.add_expert_used_count(shape.experts_used)
    writer.add_expert_feed_forward_length(shape.expert_ff)
    writer.add_sliding_window(shape.sliding_window)
    if shape.rope_scaling_factor:
        writer.add_rope_scaling_type(gguf.RopeScalingType.YARN)
        writer.add_rope_scaling_factor(shape.rope_scaling_factor)
        writer.add_rope_scaling_orig_ctx_len(shape.rope_original_context)


def _add_tokenizer(writer: Any, shape: SyntheticShape) -> None:
    vocab, ids = build_vocab(shape), shape.special_ids()
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("gpt-4o")
    writer.add_token_list(vocab.tokens)
    writer.add_token_types(vocab.types)
    writer.add_token_merges(vocab.merges)  # the writer drops an empty list; keep it non-empty
    # Same choice as the real files: Harmony ends a reply with <|return|>.
    writer.add_bos_token_id(ids["<|startoftext|>"])
    writer.add_eos_token_id(ids["<|return|>"])
    writer.add_pad_token_id(ids["<|endoftext|>"])
    writer.add_add_bos_token(False)


def _add_tensor_infos(writer: Any, plan: list[TensorPlan]) -> None:
    import gguf
    import numpy as np

    for t in plan:
        if t.dtype == "F32":
            writer.add_tensor_info(t.name, t.shape[::-1], np.dtype(np.float32), t.nbytes)
        else:
            raw = gguf.GGMLQuantizationType[t.dtype]
            writer.add_tensor_info(t.name, t.byte_shape, np.dtype(np.uint8), t.nbytes, raw)


def write_gguf(
    path: str | Path,
    shape: SyntheticShape = TINY,
    seed: int = 0,
    progress: Progress | None = None,
    tokenizer: Callable[[Any], None] | None = None,
) -> Path:
    """Writes a loadable random-weight gpt-oss GGUF.

    Metadata and tensor infos go out first, then each tensor's data, so memory stays
    bounded by the largest tensor even for the 63 GB 120b shape.

    Args:
        path: Output file; overwritten if it exists.
        shape: Model shape, e.g. `TINY` or `GPT_OSS_20B`.
        seed: Seed for the random weights; equal seeds give identical files.
        progress: Called after each tensor with (tensor bytes written, total tensor bytes).
        tokenizer: Puts another vocabulary in the writer instead of the synthetic one (e.g.
            `o200k_gguf.add_o200k_tokenizer`, gpt-oss's real one, for a 201,088-token shape).

    Returns:
        The path written.
    """
    import gguf

    out, plan = Path(path), plan_tensors(shape)
    blocks = _RandomBlocks(plan, shape.hidden, seed)
    writer = gguf.GGUFWriter(out, "gpt-oss")
    _add_hparams(writer, shape)
    (tokenizer or functools.partial(_add_tokenizer, shape=shape))(writer)
    _add_tensor_infos(writer, plan)
    total, done = sum(t.nbytes for t in plan), 0
    try:
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_ti_data_to_file()
        for t in plan:
            writer.write_tensor_data(blocks.data(t))
            done += t.nbytes
            if progress is not None:
                progress(done, total)
    finally:
        writer.close()
    return out
