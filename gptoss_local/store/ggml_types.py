"""The ggml tensor types a GGUF may name, and which of them llama.cpp can compute with."""

from __future__ import annotations

# ggml type id -> (name, values per block, bytes per block), as ggml_blck_size and
# ggml_type_size report them in the ggml that llama-cpp-python 0.3.36 vendors (a test
# compares them with the installed libggml). Ids 4, 5 and 31-33, 36-38 were removed.
GGML_TYPES: dict[int, tuple[str, int, int]] = {
    0: ("F32", 1, 4), 1: ("F16", 1, 2), 2: ("Q4_0", 32, 18), 3: ("Q4_1", 32, 20),
    6: ("Q5_0", 32, 22), 7: ("Q5_1", 32, 24), 8: ("Q8_0", 32, 34), 9: ("Q8_1", 32, 36),
    10: ("Q2_K", 256, 84), 11: ("Q3_K", 256, 110), 12: ("Q4_K", 256, 144),
    13: ("Q5_K", 256, 176), 14: ("Q6_K", 256, 210), 15: ("Q8_K", 256, 292),
    16: ("IQ2_XXS", 256, 66), 17: ("IQ2_XS", 256, 74), 18: ("IQ3_XXS", 256, 98),
    19: ("IQ1_S", 256, 50), 20: ("IQ4_NL", 32, 18), 21: ("IQ3_S", 256, 110),
    22: ("IQ2_S", 256, 82), 23: ("IQ4_XS", 256, 136), 24: ("I8", 1, 1), 25: ("I16", 1, 2),
    26: ("I32", 1, 4), 27: ("I64", 1, 8), 28: ("F64", 1, 8), 29: ("IQ1_M", 256, 56),
    30: ("BF16", 1, 2), 34: ("TQ1_0", 256, 54), 35: ("TQ2_0", 256, 66),
    39: ("MXFP4", 32, 17), 40: ("NVFP4", 64, 36), 41: ("Q1_0", 128, 18), 42: ("Q2_0", 64, 18),
}  # fmt: skip

F32 = 0
# Parseable but not usable as weights: integer and F64 tensors, and Q8_1/Q8_K, which ggml
# only makes on the fly for dot products. A weight of one of these made llama.cpp crash
# (SIGSEGV in the matrix product, an abort in get_rows) in the mutation corpus.
NOT_WEIGHT_TYPES = frozenset({9, 15, 24, 25, 26, 27, 28})


def type_name(type_id: int) -> str:
    """The ggml name of `type_id`, or "type N" for an id ggml does not know."""
    known = GGML_TYPES.get(type_id)
    return known[0] if known else f"type {type_id}"
