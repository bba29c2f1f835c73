"""A `ModelSpec` for a GGUF the user pointed at: the manifest's when it is a known file, else one
read from the file's own metadata, so the planner can size any gpt-oss-architecture model."""

from __future__ import annotations

from pathlib import Path

from gptoss_local.backends.base import BackendError
from gptoss_local.catalog import Catalog, ModelFile, ModelSpec, Shape
from gptoss_local.store.gguf_check import GgufError, check_gguf

_ARCH = "gpt-oss"
MXFP4_BYTES_PER_VALUE = 17 / 32
Q8_0_BYTES_PER_VALUE = 34 / 32


def spec_for_file(path: Path, catalog: Catalog) -> ModelSpec:
    """The spec of `path`; raises BackendError when the file is missing or not a gpt-oss GGUF."""

    try:
        info = check_gguf(path)
    except GgufError as exc:
        raise BackendError(str(exc), kind="bad_file") from None
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
        shape=_shape(path, info.metadata, info.array_lengths.get("tokenizer.ggml.tokens", 0)),
    )


REQUIRED = ("block_count", "embedding_length", "attention.head_count", "attention.head_count_kv",
            "expert_count", "expert_used_count", "expert_feed_forward_length")  # fmt: skip


def _shape(path: Path, meta: dict, vocab: int) -> Shape:
    def get(key: str, default: int = 0) -> int:
        value = meta.get(f"{_ARCH}.{key}", default)
        return int(value) if isinstance(value, (int, float)) else default

    missing = [f"{_ARCH}.{key}" for key in REQUIRED if get(key) <= 0]
    if missing:
        raise BackendError(
            f"{path.name} is marked as gpt-oss but lacks {', '.join(missing)}: it is not a "
            "complete gpt-oss model (a damaged or a different file)",
            kind="bad_file",
        )

    layers, hidden = get("block_count"), get("embedding_length")
    heads, kv_heads = get("attention.head_count"), get("attention.head_count_kv")
    head_dim = get("attention.key_length") or (hidden // max(heads, 1))
    experts, used, ff = (
        get("expert_count"),
        get("expert_used_count"),
        get("expert_feed_forward_length"),
    )
    per_layer_token = 2 * kv_heads * head_dim * 2
    expert_layer = (
        int(3 * experts * hidden * ff * MXFP4_BYTES_PER_VALUE) + 3 * experts * max(hidden, ff) * 4
    )
    embd = int(vocab * hidden * Q8_0_BYTES_PER_VALUE)
    active = int(layers * expert_layer * used / max(experts, 1))
    return Shape(
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=kv_heads,
        head_dim=head_dim,
        experts=experts,
        experts_used=used,
        vocab=vocab,
        sliding_window=get("attention.sliding_window"),
        context_max=get("context_length", 4096),
        params_total=0,
        params_active=0,
        kv_bytes_per_token=(layers // 2) * per_layer_token,  # odd layers attend fully
        expert_layer_bytes=expert_layer,
        token_embd_bytes=embd,
        decode_bytes_per_token=max(active + embd, 1),
    )
