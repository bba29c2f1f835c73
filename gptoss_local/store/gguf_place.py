"""Where each tensor's data lies: packed in order, aligned, inside the file."""

from __future__ import annotations

from gptoss_local.store.gguf_reader import TensorInfo
from gptoss_local.store.gguf_stream import Problem, show

# ggml's TENSOR_ALIGNMENT: llama.cpp maps the file and uses each tensor in place, so a
# tensor that does not start at a multiple of 32 in the file makes it abort (GGML_ASSERT
# "buffer pointer must be aligned"), whatever general.alignment says.
MAP_ALIGNMENT = 32


def check_tensor_data(
    tensors: list[TensorInfo], data_offset: int, alignment: int, size: int
) -> None:
    """Refuses tensor data that is misplaced, overlapping, unaligned or past the end.

    Raises:
        Problem: The first tensor whose data is not where llama.cpp expects it.
    """
    if tensors and data_offset > size:
        raise Problem(
            f"is truncated: it ends at byte {size:,}, before the tensor data at byte "
            f"{data_offset:,}; download it again"
        )
    expected = 0  # llama.cpp wants the tensors packed in order, each padded to the alignment
    for t in tensors:
        _check_tensor_place(t, data_offset, expected, alignment, size)
        expected += -(-t.nbytes // alignment) * alignment


def _check_tensor_place(
    t: TensorInfo, data_offset: int, expected: int, alignment: int, size: int
) -> None:
    label, start = f"tensor {show(t.name)}", data_offset + t.offset
    if t.offset % alignment:
        raise Problem(
            f"is damaged: {label} is at offset {t.offset:,}, which is not a "
            f"multiple of the file's alignment ({alignment})"
        )
    if start > size:
        raise Problem(
            f"is damaged: {label} starts at byte {start:,}, past the end of the "
            f"file ({size:,} bytes)"
        )
    if t.offset != expected:
        raise Problem(
            f"is damaged: {label} is at offset {t.offset:,} of the tensor data, "
            f"but the tensors before it end at {expected:,}"
        )
    if start + t.nbytes > size:
        raise Problem(
            f"is truncated: {label} ends at byte {start + t.nbytes:,} but the file has "
            f"{size:,} bytes; download it again"
        )
    if start % MAP_ALIGNMENT:
        raise Problem(
            f"is not loadable: {label} starts at byte {start:,}, not a multiple of "
            f"{MAP_ALIGNMENT}, which llama.cpp needs to use it in place (general.alignment "
            f"is {alignment}); convert the model again with the default alignment"
        )
