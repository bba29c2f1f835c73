"""Model shapes for synthetic gpt-oss GGUF files."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

# Offsets of the Harmony control tokens from ``special_base``; o200k_harmony puts
# <|startoftext|> at 199998, so these offsets reproduce its real ids.
HARMONY_SPECIAL_OFFSETS: dict[str, int] = {
    "<|startoftext|>": 0,
    "<|endoftext|>": 1,
    "<|return|>": 4,
    "<|constrain|>": 5,
    "<|channel|>": 7,
    "<|start|>": 8,
    "<|end|>": 9,
    "<|message|>": 10,
    "<|call|>": 14,
}
_SPECIAL_SPAN = max(HARMONY_SPECIAL_OFFSETS.values()) + 1
_QUANT_BLOCK = 32  # Q8_0 and MXFP4 both pack 32 values per block along ne0


@dataclass(frozen=True)
class SyntheticShape:
    """Hyperparameters of a synthetic gpt-oss model.

    Token ids below ``special_base`` are ordinary tokens (byte symbols, merged words,
    fillers); ids from ``special_base`` up are control tokens (Harmony specials and
    ``<|reserved_N|>`` fillers). ``rope_scaling_factor`` 0 means no YaRN metadata.
    """

    name: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    experts: int
    experts_used: int
    expert_ff: int
    vocab_size: int
    special_base: int
    sliding_window: int
    context_length: int
    rope_base: float = 150000.0
    rope_scaling_factor: float = 0.0
    rope_original_context: int = 0
    rms_eps: float = 1e-5

    def __post_init__(self) -> None:
        # Fail at construction, not deep inside llama.cpp's loader.
        for dim in (self.hidden, self.expert_ff, self.heads * self.head_dim):
            if dim % _QUANT_BLOCK:
                raise ValueError(f"{self.name}: quantized row width {dim} not a multiple of 32")
        if self.heads % self.kv_heads:
            raise ValueError(f"{self.name}: heads must be a multiple of kv_heads")
        if not 0 < self.experts_used <= self.experts:
            raise ValueError(f"{self.name}: need 0 < experts_used <= experts")
        if self.vocab_size - self.special_base < _SPECIAL_SPAN:
            raise ValueError(f"{self.name}: vocab has no room for the Harmony specials")

    @property
    def q_dim(self) -> int:
        """Width of the query projection (heads * head_dim)."""
        return self.heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        """Width of the key and value projections (kv_heads * head_dim)."""
        return self.kv_heads * self.head_dim

    def special_ids(self) -> dict[str, int]:
        """Returns the token id of each Harmony special token for this shape."""
        return {text: self.special_base + off for text, off in HARMONY_SPECIAL_OFFSETS.items()}


TINY = SyntheticShape(
    name="tiny",
    layers=2,
    hidden=64,
    heads=4,
    kv_heads=2,
    head_dim=16,
    experts=4,
    experts_used=2,
    expert_ff=64,
    vocab_size=512,
    special_base=480,
    sliding_window=128,
    context_length=4096,
)

# TINY's layers with gpt-oss's real 201,088-token vocabulary: the matmuls cost little, so what a
# runner does per token over the whole vocabulary (logit copies, sampling) dominates decode.
TINY_VOCAB = dataclasses.replace(TINY, name="tiny-vocab", vocab_size=201_088, special_base=199_998)

# Big enough that decode cost is dominated by matmuls, small enough for a 2-core CPU.
SMALL = SyntheticShape(
    name="small",
    layers=6,
    hidden=512,
    heads=8,
    kv_heads=2,
    head_dim=64,
    experts=16,
    experts_used=4,
    expert_ff=512,
    vocab_size=16384,
    special_base=16352,
    sliding_window=128,
    context_length=131072,
    rope_scaling_factor=32.0,
    rope_original_context=4096,
)

GPT_OSS_20B = SyntheticShape(
    name="20b",
    layers=24,
    hidden=2880,
    heads=64,
    kv_heads=8,
    head_dim=64,
    experts=32,
    experts_used=4,
    expert_ff=2880,
    vocab_size=201088,
    special_base=199998,
    sliding_window=128,
    context_length=131072,
    rope_scaling_factor=32.0,
    rope_original_context=4096,
)

GPT_OSS_120B = SyntheticShape(
    name="120b",
    layers=36,
    hidden=2880,
    heads=64,
    kv_heads=8,
    head_dim=64,
    experts=128,
    experts_used=4,
    expert_ff=2880,
    vocab_size=201088,
    special_base=199998,
    sliding_window=128,
    context_length=131072,
    rope_scaling_factor=32.0,
    rope_original_context=4096,
)

PRESETS: dict[str, SyntheticShape] = {
    s.name: s for s in (TINY, TINY_VOCAB, SMALL, GPT_OSS_20B, GPT_OSS_120B)
}
