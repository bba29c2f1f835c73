"""Random-weight gpt-oss GGUF files with real tensor shapes, types and a Harmony tokenizer.

Used by tests and benchmarks in place of the real multi-GB downloads. Requires the
``gguf`` and ``numpy`` packages, which are imported only when a file is written.
"""

from synthetic.plan import TensorPlan, plan_tensors, tensor_bytes
from synthetic.shapes import (
    GPT_OSS_20B,
    GPT_OSS_120B,
    PRESETS,
    SMALL,
    TINY,
    SyntheticShape,
)
from synthetic.vocab import HARMONY_WORDS, Vocab, build_vocab
from synthetic.writer import write_gguf

__all__ = [
    "GPT_OSS_20B",
    "GPT_OSS_120B",
    "HARMONY_WORDS",
    "PRESETS",
    "SMALL",
    "TINY",
    "SyntheticShape",
    "TensorPlan",
    "Vocab",
    "build_vocab",
    "plan_tensors",
    "tensor_bytes",
    "write_gguf",
]
