"""The list of tensors a synthetic gpt-oss GGUF holds, computed without numpy or gguf."""

from __future__ import annotations

from dataclasses import dataclass

from synthetic.shapes import SyntheticShape

# ggml type name -> (values per block, bytes per block)
BLOCK_LAYOUT: dict[str, tuple[int, int]] = {"F32": (1, 4), "Q8_0": (32, 34), "MXFP4": (32, 17)}


@dataclass(frozen=True)
class TensorPlan:
    """One tensor of the file: name, ggml shape (ne0 first), ggml type name and size."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    nbytes: int

    @property
    def byte_shape(self) -> tuple[int, ...]:
        """Numpy shape of the raw bytes (outermost dim first, bytes per row last)."""
        per_block, block_bytes = BLOCK_LAYOUT[self.dtype]
        return (*reversed(self.shape[1:]), self.shape[0] // per_block * block_bytes)


def _tensor(name: str, shape: tuple[int, ...], dtype: str) -> TensorPlan:
    per_block, block_bytes = BLOCK_LAYOUT[dtype]
    count = 1
    for dim in shape:
        count *= dim
    return TensorPlan(name, shape, dtype, count // per_block * block_bytes)


def _layer_tensors(s: SyntheticShape, i: int) -> list[TensorPlan]:
    # Mirrors what llama.cpp's gpt-oss loader creates per block; extra or missing
    # tensors make the load fail, so this list must match it exactly.
    e, h, ff = s.experts, s.hidden, s.expert_ff
    specs = [
        ("attn_norm.weight", (h,), "F32"),
        ("post_attention_norm.weight", (h,), "F32"),
        ("attn_q.weight", (h, s.q_dim), "Q8_0"),
        ("attn_q.bias", (s.q_dim,), "F32"),
        ("attn_k.weight", (h, s.kv_dim), "Q8_0"),
        ("attn_k.bias", (s.kv_dim,), "F32"),
        ("attn_v.weight", (h, s.kv_dim), "Q8_0"),
        ("attn_v.bias", (s.kv_dim,), "F32"),
        ("attn_output.weight", (s.q_dim, h), "Q8_0"),
        ("attn_output.bias", (h,), "F32"),
        ("attn_sinks.weight", (s.heads,), "F32"),
        ("ffn_gate_inp.weight", (h, e), "F32"),
        ("ffn_gate_inp.bias", (e,), "F32"),
        ("ffn_gate_exps.weight", (h, ff, e), "MXFP4"),
        ("ffn_gate_exps.bias", (ff, e), "F32"),
        ("ffn_up_exps.weight", (h, ff, e), "MXFP4"),
        ("ffn_up_exps.bias", (ff, e), "F32"),
        ("ffn_down_exps.weight", (ff, h, e), "MXFP4"),
        ("ffn_down_exps.bias", (h, e), "F32"),
    ]
    return [_tensor(f"blk.{i}.{name}", shape, dtype) for name, shape, dtype in specs]


def plan_tensors(shape: SyntheticShape) -> list[TensorPlan]:
    """Lists the tensors `write_gguf` writes for ``shape``, in file order.

    Args:
        shape: The model shape.

    Returns:
        One `TensorPlan` per tensor with ggml shapes (ne0 first) and exact byte sizes.
    """
    tensors = [_tensor("token_embd.weight", (shape.hidden, shape.vocab_size), "Q8_0")]
    for i in range(shape.layers):
        tensors += _layer_tensors(shape, i)
    tensors.append(_tensor("output_norm.weight", (shape.hidden,), "F32"))
    tensors.append(_tensor("output.weight", (shape.hidden, shape.vocab_size), "Q8_0"))
    return tensors


def tensor_bytes(shape: SyntheticShape) -> int:
    """Returns the total tensor data size for ``shape`` in bytes (alignment padding excluded)."""
    return sum(t.nbytes for t in plan_tensors(shape))
