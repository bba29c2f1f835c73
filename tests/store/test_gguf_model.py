"""The pre-load check of a gpt-oss GGUF: real layouts pass quickly, and each value llama.cpp
would crash on is refused with a sentence naming the file, the key or tensor, and the value."""

from __future__ import annotations

import copy
import ctypes
import time
from pathlib import Path

import pytest
from gguf_headers import write_header_only
from gguf_layout import Kv, parse, write
from gguf_mutations import targeted
from synthetic import GPT_OSS_20B, GPT_OSS_120B, TINY, SyntheticShape, plan_tensors

from gptoss_local.store.ggml_types import GGML_TYPES
from gptoss_local.store.gguf_check import GgufError
from gptoss_local.store.gguf_hparams import Hparams
from gptoss_local.store.gguf_model import (
    check_loadable,
    expected_tensors,
    optional_tensors,
    read_model,
)

EDITS = dict(targeted())
# (edit of the corpus generator, words the refusal must contain)
REFUSALS = [
    ("expert_count=1025", "gpt-oss.expert_count is 1,025; it must be from 1 to 1,024"),
    ("expert_used_count=5", "gpt-oss.expert_used_count is 5; it must be from 1 to 4"),
    ("block_count=513", "gpt-oss.block_count is 513; it must be from 1 to 512"),
    ("attention.value_length=32", "value_length is 32, but gpt-oss.attention.key_length is 16"),
    ("attention.layer_norm_rms_epsilon=nan", "layer_norm_rms_epsilon is nan; it must be a"),
    ("rope.scaling.type=foo", "llama.cpp knows none, linear, yarn, longrope"),
    ("attention.head_count_kv=3", "head_count (4) is not a multiple of"),
    ("expert_count as i32", "gpt-oss.expert_count has type i32, but llama.cpp reads a uint32"),
    ("expert_used_count per layer, too many", "expert_used_count differs between layers"),
    ("no gpt-oss.block_count", "is marked as gpt-oss but lacks gpt-oss.block_count"),
    ("expert_count=2", "'blk.0.ffn_gate_inp.weight' has shape [64, 4], but the file's metadata"),
    ("block_count=1", "tensor 'blk.1.attn_norm.weight', which is not part of a 1-layer"),
    ("no tensor output.weight", "it lacks tensor 'output.weight'"),
    ("duplicate tokens", "'tokenizer.ggml.tokens' repeats an earlier token at #1"),
    ("tokenizer model llama", "its tokenizer is 'llama', but gpt-oss uses 'gpt2'"),
    ("token types one short", "token_type has 511 entries for 512 tokens"),
    ("eos id 512", "tokenizer.ggml.eos_token_id is 512, but the vocabulary has 512 tokens"),
    ("alignment 8", "starts at byte 13,576, not a multiple of 32"),
    ("attn_norm as F16", "'blk.0.attn_norm.weight' is F16, but llama.cpp needs F32"),
    ("up_exps as I32", "'blk.0.ffn_up_exps.weight' is I32, a type llama.cpp cannot compute"),
    ("attn_v as Q8_1", "'blk.1.attn_v.weight' is Q8_1"),
]


def edited(tiny: Path, folder: Path, name: str) -> Path:
    layout = parse(tiny.read_bytes())
    EDITS[name](layout)
    path = folder / "edited.gguf"
    path.write_bytes(write(layout))
    return path


@pytest.mark.parametrize(("edit", "words"), REFUSALS, ids=[r[0] for r in REFUSALS])
def test_a_crashing_value_is_refused_with_its_reason(
    tiny_gguf: Path, tmp_path: Path, edit: str, words: str
) -> None:
    path = edited(tiny_gguf, tmp_path, edit)
    with pytest.raises(GgufError) as caught:
        check_loadable(path)
    message = str(caught.value)
    assert message.startswith(f"{path} is "), message
    assert words in message and "\n" not in message, message


@pytest.mark.parametrize("edit", ["expert_used_count per layer", "attn_q as F16", "output as F32"])
def test_what_llama_cpp_loads_is_accepted(tiny_gguf: Path, tmp_path: Path, edit: str) -> None:
    check_loadable(edited(tiny_gguf, tmp_path, edit))


def test_the_tiny_model_passes_with_its_shape(tiny_gguf: Path) -> None:
    info, hp = read_model(tiny_gguf)
    assert hp == hparams_of(TINY)
    assert len(info.tensors) == len(plan_tensors(TINY))


def hparams_of(s: SyntheticShape) -> Hparams:
    return Hparams(
        s.layers, s.hidden, s.heads, s.kv_heads, s.head_dim, s.experts, s.experts_used,
        s.expert_ff, s.context_length, s.sliding_window,
    )  # fmt: skip


@pytest.mark.parametrize("shape", [TINY, GPT_OSS_20B, GPT_OSS_120B], ids=lambda s: s.name)
def test_expected_tensors_are_the_real_layout(shape: SyntheticShape) -> None:
    # tests/synthetic mirrors llama.cpp's gpt-oss loader and the ggml-org MXFP4 files.
    hp = hparams_of(shape)
    expected = expected_tensors(hp, shape.vocab_size) | optional_tensors(hp)
    plan = {t.name: t for t in plan_tensors(shape)}
    assert {name: shape for name, (shape, _) in expected.items()} == {
        name: t.shape for name, t in plan.items()
    }
    assert all(plan[name].dtype == "F32" for name, (_, f32) in expected.items() if f32)


@pytest.mark.parametrize("shape", [GPT_OSS_20B, GPT_OSS_120B], ids=lambda s: s.name)
def test_real_sizes_are_checked_in_well_under_a_second(
    shape: SyntheticShape, tmp_path: Path
) -> None:
    path = write_header_only(tmp_path / f"{shape.name}.gguf", shape)
    assert path.stat().st_size > 12_000_000_000  # sparse: only the header is on disk
    started = time.perf_counter()
    info, hp = read_model(path)
    assert time.perf_counter() - started < 2.0  # ~0.1-0.2 s; the vocabulary dominates
    assert hp == hparams_of(shape) and len(info.tensors) == len(plan_tensors(shape))


def split_in_two(tiny: Path, folder: Path, drop: str = "") -> Path:
    """The tiny model as two shards, the way llama.cpp's gguf-split writes them."""
    layout = parse(tiny.read_bytes())
    half = len(layout.tensors) // 2
    first, second = copy.deepcopy(layout), copy.deepcopy(layout)
    first.tensors, second.tensors = layout.tensors[:half], layout.tensors[half:]
    second.tensors = [t for t in second.tensors if t.name != drop]
    second.kvs = []
    for no, shard in enumerate((first, second)):
        shard.kvs += [Kv("split.no", 2, no), Kv("split.count", 2, 2)]
        total = len(first.tensors) + len(second.tensors)
        shard.kvs.append(Kv("split.tensors.count", 5, total))
        (folder / f"m-{no + 1:05d}-of-00002.gguf").write_bytes(write(shard))
    return folder / "m-00001-of-00002.gguf"


def test_a_split_model_is_checked_across_its_shards(tiny_gguf: Path, tmp_path: Path) -> None:
    info = check_loadable(split_in_two(tiny_gguf, tmp_path))
    assert info.split_count == 2 and len(info.tensors) == len(plan_tensors(TINY))
    first = split_in_two(tiny_gguf, tmp_path, drop="output.weight")
    with pytest.raises(GgufError, match=r"it lacks tensor 'output\.weight'"):
        check_loadable(first)


def _libggml() -> ctypes.CDLL:
    llama_cpp = pytest.importorskip("llama_cpp")
    found = sorted(Path(llama_cpp.__file__).parent.glob("lib/*ggml-base*"))
    if not found:
        pytest.skip("libggml-base is not where llama-cpp-python keeps it")
    lib = ctypes.CDLL(str(found[0]))
    lib.ggml_type_size.restype, lib.ggml_blck_size.restype = ctypes.c_size_t, ctypes.c_int64
    lib.ggml_type_name.restype = ctypes.c_char_p
    return lib


def test_ggml_type_table_matches_the_installed_ggml() -> None:
    lib = _libggml()
    for type_id, (name, block, size) in GGML_TYPES.items():
        found = (lib.ggml_type_name(type_id).decode(), lib.ggml_blck_size(type_id))
        assert (found[0].lower(), found[1], lib.ggml_type_size(type_id)) == (
            name.lower(),
            block,
            size,
        )


def test_layout_round_trip_is_exact(tiny_gguf: Path) -> None:
    raw = tiny_gguf.read_bytes()
    assert write(parse(raw)) == raw  # so each mutant differs from the model only by its edit
