"""A `ModelSpec` for a GGUF the user pointed at: the manifest's when it is a known file, else one
read from the file's own metadata, so the planner can size any gpt-oss-architecture model."""

from __future__ import annotations

from pathlib import Path

from gptoss_local.catalog import Catalog, ModelFile, ModelSpec, Shape
from gptoss_local.store.gguf_hparams import Hparams
from gptoss_local.store.gguf_model import read_model

MXFP4_BYTES_PER_VALUE = 17 / 32
Q8_0_BYTES_PER_VALUE = 34 / 32


def spec_for_file(path: Path, catalog: Catalog) -> ModelSpec:
    """The spec of `path`; raises GgufError when llama.cpp could not load it as gpt-oss.

    The file gets the whole pre-load check (`gguf_model.check_loadable`), so a damaged file
    is refused here with a reason instead of crashing llama.cpp later.
    """
    info, hp = read_model(path)
    for spec in catalog.models:
        if spec.entry_file.name == path.name and spec.entry_file.bytes == info.file_size:
            return spec
    total = info.file_size * info.split_count  # shards of one model are about the same size
    return ModelSpec(
        name=path.stem,
        aliases=(),
        repo="",
        revision="",
        license=str(info.metadata.get("general.license", "unknown")),
        ollama_tag="",
        files=(ModelFile(path.name, total, "0" * 64),),
        shape=_shape(hp, info.array_lengths["tokenizer.ggml.tokens"]),
    )


def _shape(hp: Hparams, vocab: int) -> Shape:
    per_layer_token = 2 * hp.kv_heads * hp.head_dim * 2
    hidden, ff, experts = hp.hidden, hp.expert_ff, hp.experts
    expert_layer = (
        int(3 * experts * hidden * ff * MXFP4_BYTES_PER_VALUE) + 3 * experts * max(hidden, ff) * 4
    )
    embd = int(vocab * hidden * Q8_0_BYTES_PER_VALUE)
    active = int(hp.layers * expert_layer * hp.experts_used / experts)
    return Shape(
        layers=hp.layers,
        hidden=hidden,
        heads=hp.heads,
        kv_heads=hp.kv_heads,
        head_dim=hp.head_dim,
        experts=experts,
        experts_used=hp.experts_used,
        vocab=vocab,
        sliding_window=hp.sliding_window,
        context_max=hp.context,
        params_total=0,
        params_active=0,
        kv_bytes_per_token=(hp.layers // 2) * per_layer_token,  # odd layers attend fully
        expert_layer_bytes=expert_layer,
        token_embd_bytes=embd,
        decode_bytes_per_token=max(active + embd, 1),
    )
