"""The check before llama.cpp loads a file: a well-formed GGUF that is a whole gpt-oss model.

`check_gguf` proves the file can be parsed; this adds what llama.cpp's gpt-oss loader
asserts or assumes instead of checking (the hyper-parameters, every tensor's name, shape and
type, the vocabulary), since a damaged file there aborts the process with a backtrace.
Only the header and the tensor infos are read, so this costs about as much as `check_gguf`.
"""

from __future__ import annotations

import re
from pathlib import Path

from gptoss_local.i18n import _, ngettext
from gptoss_local.store.ggml_types import F32, NOT_WEIGHT_TYPES, type_name
from gptoss_local.store.gguf_check import GgufError, GgufInfo, check_gguf
from gptoss_local.store.gguf_hparams import Hparams, read_hparams
from gptoss_local.store.gguf_stream import Problem, show

__all__ = ["check_gpt_oss", "check_loadable", "expected_tensors", "optional_tensors", "read_model"]

# A tensor's expected ggml shape (row length first) and whether it must be F32.
Expected = dict[str, tuple[tuple[int, ...], bool]]

TOKENIZER = "gpt2"  # gpt-oss's byte-level BPE; another model makes llama.cpp terminate
STRING_ARRAY, INT32 = 8, 5
_SPECIAL_ID = re.compile(r"tokenizer\.ggml\.\w+_token_id")


def check_loadable(path: str | Path) -> GgufInfo:
    """Checks that llama.cpp can load `path` as a gpt-oss model without crashing.

    Args:
        path: The file, or the first shard of a split model (the others are checked too).

    Returns:
        What `check_gguf` learnt about the file.

    Raises:
        GgufError: The file is damaged, truncated, incomplete or not a gpt-oss model; the
            message names the file and what is wrong.
    """
    return read_model(path)[0]


def read_model(path: str | Path) -> tuple[GgufInfo, Hparams]:
    """`check_loadable`, also returning the model's hyper-parameters."""
    info = check_gguf(path)
    try:
        return info, check_gpt_oss(info)
    except Problem as exc:
        raise GgufError(info.path, str(exc)) from None


def check_gpt_oss(info: GgufInfo) -> Hparams:
    """Checks the hyper-parameters, the vocabulary and every tensor of a checked file.

    Raises:
        Problem: What llama.cpp would refuse or crash on, worded to follow the file's path.
    """
    hp = read_hparams(info)
    vocab = _check_vocab(info)
    expected = expected_tensors(hp, vocab, fused_qkv="blk.0.attn_qkv.weight" in _names(info))
    _check_tensors(info, expected, hp, vocab)
    return hp


def expected_tensors(hp: Hparams, vocab: int, *, fused_qkv: bool = False) -> Expected:
    """Every tensor llama.cpp's gpt-oss loader creates, as its `load_arch_tensors` lists them.

    The optional ones (the q/k/v biases) are in `optional_tensors`.
    """
    h, e, ff = hp.hidden, hp.experts, hp.expert_ff
    q, kv = hp.heads * hp.head_dim, hp.kv_heads * hp.head_dim
    out: Expected = {
        "token_embd.weight": ((h, vocab), False),
        "output_norm.weight": ((h,), True),
        "output.weight": ((h, vocab), False),
    }
    layer: Expected = {
        "attn_norm.weight": ((h,), True),
        "post_attention_norm.weight": ((h,), True),
        "attn_output.weight": ((q, h), False),
        "attn_output.bias": ((h,), True),
        "attn_sinks.weight": ((hp.heads,), True),
        "ffn_gate_inp.weight": ((h, e), False),
        "ffn_gate_inp.bias": ((e,), True),
        "ffn_gate_exps.weight": ((h, ff, e), False),
        "ffn_gate_exps.bias": ((ff, e), True),
        "ffn_up_exps.weight": ((h, ff, e), False),
        "ffn_up_exps.bias": ((ff, e), True),
        "ffn_down_exps.weight": ((ff, h, e), False),
        "ffn_down_exps.bias": ((h, e), True),
    }
    if fused_qkv:
        layer["attn_qkv.weight"] = ((h, q + 2 * kv), False)
    else:
        layer |= {f"attn_{x}.weight": ((h, n), False) for x, n in (("q", q), ("k", kv), ("v", kv))}
    for i in range(hp.layers):
        out |= {f"blk.{i}.{name}": spec for name, spec in layer.items()}
    return out


def optional_tensors(hp: Hparams, fused_qkv: bool = False) -> Expected:
    """The tensors llama.cpp takes when present: the attention biases."""
    q, kv = hp.heads * hp.head_dim, hp.kv_heads * hp.head_dim
    sizes = {"q": q, "k": kv, "v": kv, "qkv": q + 2 * kv}
    # Fused weights may come with a fused bias or with separate ones.
    names = ("qkv", "q", "k", "v") if fused_qkv else ("q", "k", "v")
    return {f"blk.{i}.attn_{x}.bias": ((sizes[x],), True) for i in range(hp.layers) for x in names}


def _names(info: GgufInfo) -> set[str]:
    return {t.name for t in info.tensors}


def _check_tensors(info: GgufInfo, expected: Expected, hp: Hparams, vocab: int) -> None:
    allowed = expected | optional_tensors(hp, "blk.0.attn_qkv.weight" in expected)
    for t in info.tensors:
        spec = allowed.get(t.name)
        if spec is None:
            raise Problem(
                _(
                    "is damaged: it holds a tensor {name}, which is not part of a "
                    "{layers}-layer gpt-oss model (llama.cpp refuses extra tensors)"
                ).format(name=show(t.name), layers=hp.layers)
            )
        shape, f32_only = spec
        if _padded(t.dims) != _padded(shape):
            raise Problem(
                _(
                    "is damaged: tensor {name} has shape {shape}, but the file's "
                    "metadata ({summary}) needs {needed}"
                ).format(
                    name=show(t.name),
                    shape=list(t.dims),
                    summary=_summary(hp, vocab),
                    needed=list(shape),
                )
            )
        _check_type(t.name, t.ggml_type, f32_only)
    present = _names(info)
    missing = [name for name in expected if name not in present]
    if missing:
        more = len(missing) - 1
        if more:
            message = ngettext(
                "is not a complete gpt-oss model: it lacks tensor {name} and {n} more "
                "(its metadata says {layers} layers); download it again",
                "is not a complete gpt-oss model: it lacks tensor {name} and {n} more "
                "(its metadata says {layers} layers); download it again",
                more,
            )
        else:
            message = _(
                "is not a complete gpt-oss model: it lacks tensor {name} "
                "(its metadata says {layers} layers); download it again"
            )
        raise Problem(message.format(name=show(missing[0]), n=more, layers=hp.layers))


def _check_type(name: str, ggml_type: int, f32_only: bool) -> None:
    if f32_only and ggml_type != F32:
        raise Problem(
            _(
                "is not loadable: tensor {name} is {type}, but llama.cpp "
                "needs F32 for norms, biases and attention sinks"
            ).format(name=show(name), type=type_name(ggml_type))
        )
    if ggml_type in NOT_WEIGHT_TYPES:
        raise Problem(
            _(
                "is not loadable: tensor {name} is {type}, a type llama.cpp "
                "cannot compute with (it would crash); the file is damaged"
            ).format(name=show(name), type=type_name(ggml_type))
        )


def _padded(dims: tuple[int, ...]) -> tuple[int, ...]:
    """ggml shapes compare as 4 dims, the missing ones 1 (llama.cpp's check_tensor_dims)."""
    return tuple(dims) + (1,) * (4 - len(dims))


def _summary(hp: Hparams, vocab: int) -> str:
    return _(
        "width {hidden}, {heads} heads of {head_dim}, {kv_heads} KV heads, "
        "{experts} experts of {expert_ff}, {vocab:,} tokens"
    ).format(
        hidden=hp.hidden,
        heads=hp.heads,
        head_dim=hp.head_dim,
        kv_heads=hp.kv_heads,
        experts=hp.experts,
        expert_ff=hp.expert_ff,
        vocab=vocab,
    )


def _check_vocab(info: GgufInfo) -> int:
    """Checks the tokenizer keys; returns the vocabulary size."""
    model = info.metadata.get("tokenizer.ggml.model")
    if model is None:
        raise Problem(_("is not a complete gpt-oss model: it has no tokenizer.ggml.model key"))
    if model != TOKENIZER:
        raise Problem(
            _("is not loadable: its tokenizer is {found}, but gpt-oss uses '{tokenizer}'").format(
                found=show(str(model)), tokenizer=TOKENIZER
            )
        )
    for key in ("tokenizer.ggml.tokens", "tokenizer.ggml.merges"):
        if info.array_types.get(key) != STRING_ARRAY:
            raise Problem(
                _("is not a complete gpt-oss model: it has no {key} list of strings").format(
                    key=key
                )
            )
    vocab = info.array_lengths["tokenizer.ggml.tokens"]
    types = info.array_lengths.get("tokenizer.ggml.token_type")
    if types is not None and (
        types != vocab or info.array_types.get("tokenizer.ggml.token_type") != INT32
    ):
        raise Problem(
            _(
                "is damaged: tokenizer.ggml.token_type has {types:,} entries for {vocab:,} tokens"
            ).format(types=types, vocab=vocab)
        )
    for key, value in info.metadata.items():
        if _SPECIAL_ID.fullmatch(key) and isinstance(value, int) and value >= vocab:
            raise Problem(
                _("is damaged: {key} is {value:,}, but the vocabulary has {vocab:,} tokens").format(
                    key=key, value=value, vocab=vocab
                )
            )
    return vocab
