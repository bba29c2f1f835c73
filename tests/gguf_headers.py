"""GGUF files with a real model's metadata and tensor infos but no tensor data (a sparse file
of the full size), so checks that read only the header can run on 13 GB and 65 GB layouts."""

from __future__ import annotations

import os
from pathlib import Path

from synthetic import SyntheticShape, plan_tensors

# The synthetic writer's own metadata and tensor-info steps, so these headers are the ones
# its full files have.
from synthetic.writer import _add_hparams, _add_tensor_infos, _add_tokenizer

ALIGNMENT = 32


def write_header_only(path: Path, shape: SyntheticShape) -> Path:
    """Writes `shape`'s header and tensor infos, then extends the file to its full size.

    Returns:
        `path`, whose size is what the full file's would be (the data reads as zeros).
    """
    import gguf

    plan = plan_tensors(shape)
    writer = gguf.GGUFWriter(path, "gpt-oss")
    _add_hparams(writer, shape)
    _add_tokenizer(writer, shape)
    _add_tensor_infos(writer, plan)
    try:
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_ti_data_to_file()
    finally:
        writer.close()
    header = path.stat().st_size
    data = sum(-(-t.nbytes // ALIGNMENT) * ALIGNMENT for t in plan)
    os.truncate(path, -(-header // ALIGNMENT) * ALIGNMENT + data)
    return path
