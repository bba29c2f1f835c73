"""Tests for the synthetic gpt-oss GGUF writer, loaded with the real llama.cpp."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

# Imported unconditionally: a missing llama_cpp must fail these tests, not skip them.
import llama_cpp
import llama_cpp.llama_cpp as llama_c
import numpy as np
import pytest
from synthetic import (
    GPT_OSS_20B,
    GPT_OSS_120B,
    HARMONY_WORDS,
    SMALL,
    TINY,
    build_vocab,
    plan_tensors,
    tensor_bytes,
    write_gguf,
)
from synthetic.vocab import TOKEN_CONTROL, byte_symbols

HARMONY_PROMPT = (
    "<|start|>system<|message|>Reasoning: low<|end|>"
    "<|start|>user<|message|>Hi<|end|>"
    "<|start|>assistant<|channel|>analysis<|message|>"
)
SPECIALS = (
    "<|startoftext|>",
    "<|endoftext|>",
    "<|return|>",
    "<|constrain|>",
    "<|channel|>",
    "<|start|>",
    "<|end|>",
    "<|message|>",
    "<|call|>",
)
# Sizes of the ggml-org files (see the project's model notes): 20b is one file, 120b three shards.
REAL_20B_FILE_BYTES = 12_109_566_560
REAL_120B_FILE_BYTES = 12_980_384 + 31_738_487_200 + 31_635_878_880


@pytest.fixture(scope="module")
def tiny_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_gguf(tmp_path_factory.mktemp("synthetic") / "tiny.gguf", TINY, seed=1)


@pytest.fixture(scope="module")
def llm(tiny_path: Path) -> Iterator[llama_cpp.Llama]:
    # Llama() has no use_extra_bufts argument, so patch the defaults it starts from.
    # The AMX repacked Q8_0 matmul of this llama.cpp segfaults on this CPU (llama.cpp#20824).
    default_params = llama_c.llama_model_default_params

    def no_extra_bufts() -> llama_c.llama_model_params:
        params = default_params()
        params.use_extra_bufts = False
        return params

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(llama_c, "llama_model_default_params", no_extra_bufts)
        model = llama_cpp.Llama(str(tiny_path), n_ctx=256, n_threads=2, verbose=False)
    yield model
    model.close()


def _single_token(model: llama_cpp.Llama, text: str, special: bool = True) -> int:
    ids = model.tokenize(text.encode(), add_bos=False, special=special)
    assert len(ids) == 1, f"{text!r} -> {ids}"
    return ids[0]


def test_plan_20b_matches_real_file() -> None:
    plan = {t.name: t for t in plan_tensors(GPT_OSS_20B)}
    assert len(plan) == 459
    assert Counter(t.dtype for t in plan.values()) == {"F32": 289, "Q8_0": 98, "MXFP4": 72}
    assert plan["blk.0.ffn_gate_exps.weight"].nbytes == 141_004_800
    assert plan["blk.23.ffn_down_exps.weight"].shape == (2880, 2880, 32)
    assert plan["token_embd.weight"].shape == (2880, 201088)
    assert plan["token_embd.weight"].nbytes == 201088 * 2880 // 32 * 34
    assert plan["output.weight"].nbytes == plan["token_embd.weight"].nbytes
    assert plan["blk.0.attn_sinks.weight"].shape == (64,)
    # Every size is a multiple of the 32-byte alignment, so the real file is our tensor
    # bytes plus its metadata (about 13 MB of tokenizer and header).
    assert all(t.nbytes % 32 == 0 for t in plan.values())
    assert 0 < REAL_20B_FILE_BYTES - tensor_bytes(GPT_OSS_20B) < 16 * 2**20


def test_plan_120b_matches_real_file() -> None:
    plan = {t.name: t for t in plan_tensors(GPT_OSS_120B)}
    assert len(plan) == 3 + 36 * 19
    assert plan["blk.35.ffn_up_exps.weight"].nbytes == 128 * 2880 * 2880 // 32 * 17
    assert 0 < REAL_120B_FILE_BYTES - tensor_bytes(GPT_OSS_120B) < 16 * 2**20


def test_presets() -> None:
    assert (GPT_OSS_20B.layers, GPT_OSS_20B.experts, GPT_OSS_20B.experts_used) == (24, 32, 4)
    assert (GPT_OSS_20B.heads, GPT_OSS_20B.kv_heads, GPT_OSS_20B.head_dim) == (64, 8, 64)
    assert (GPT_OSS_20B.rope_base, GPT_OSS_20B.rope_scaling_factor) == (150000.0, 32.0)
    assert (GPT_OSS_20B.rope_original_context, GPT_OSS_20B.context_length) == (4096, 131072)
    assert GPT_OSS_20B.sliding_window == 128
    assert (GPT_OSS_120B.layers, GPT_OSS_120B.experts) == (36, 128)
    assert 20e6 < tensor_bytes(SMALL) < 100e6
    assert tensor_bytes(TINY) < 300_000


def test_vocab_full_size_uses_real_special_ids() -> None:
    vocab = build_vocab(GPT_OSS_20B)
    assert len(vocab.tokens) == len(set(vocab.tokens)) == 201088
    real_ids = (199998, 199999, 200002, 200003, 200005, 200006, 200007, 200008, 200012)
    assert [vocab.tokens.index(s) for s in SPECIALS] == list(real_ids)
    assert all(vocab.types[i] == TOKEN_CONTROL for i in real_ids)
    assert vocab.tokens[:256] == byte_symbols()
    assert vocab.merges and all(len(m.split(" ")) == 2 for m in vocab.merges)


def test_write_is_deterministic_and_reports_progress(tmp_path: Path, tiny_path: Path) -> None:
    calls: list[tuple[int, int]] = []
    again = write_gguf(
        tmp_path / "again.gguf", TINY, seed=1, progress=lambda d, t: calls.append((d, t))
    )
    other = write_gguf(tmp_path / "other.gguf", TINY, seed=2)
    assert again.read_bytes() == tiny_path.read_bytes()
    assert other.read_bytes() != tiny_path.read_bytes()
    assert len(calls) == len(plan_tensors(TINY))
    assert calls[-1] == (tensor_bytes(TINY), tensor_bytes(TINY))


def test_quant_blocks_are_sane(tiny_path: Path) -> None:
    import gguf

    tensors = {t.name: t for t in gguf.GGUFReader(tiny_path).tensors}
    expert = np.asarray(tensors["blk.0.ffn_up_exps.weight"].data).reshape(-1, 17)
    assert expert[:, 0].min() >= 118 and expert[:, 0].max() <= 122
    attn = np.asarray(tensors["blk.1.attn_q.weight"].data).reshape(-1, 34)
    scales = attn[:, :2].copy().view("<f2").astype(np.float32)
    assert np.isfinite(scales).all() and scales.min() > 0 and scales.max() < 0.01
    assert tensors["blk.0.attn_sinks.weight"].tensor_type == gguf.GGMLQuantizationType.F32


def test_metadata(llm: llama_cpp.Llama) -> None:
    meta = llm.metadata
    assert meta["general.architecture"] == "gpt-oss"
    assert int(meta["gpt-oss.expert_count"]) == TINY.experts
    assert int(meta["gpt-oss.expert_used_count"]) == TINY.experts_used
    assert int(meta["gpt-oss.attention.key_length"]) == TINY.head_dim
    assert meta["tokenizer.ggml.pre"] == "gpt-4o"
    assert llm.n_vocab() == TINY.vocab_size


def test_harmony_specials_are_single_tokens(llm: llama_cpp.Llama) -> None:
    ids = {text: _single_token(llm, text) for text in SPECIALS}
    assert ids == TINY.special_ids()
    prompt = llm.tokenize(HARMONY_PROMPT.encode(), add_bos=False, special=True)
    assert prompt.count(ids["<|start|>"]) == 3 and prompt.count(ids["<|end|>"]) == 2
    assert llm.detokenize(prompt, special=True).decode() == HARMONY_PROMPT


def test_special_parsing_off_matches_llama_cpp_rules(llm: llama_cpp.Llama) -> None:
    # llama.cpp demotes these five Harmony tokens (by text) to USER_DEFINED, which it
    # matches and renders even with special=False; user text must be escaped by callers.
    always = {"<|constrain|>", "<|channel|>", "<|start|>", "<|end|>", "<|message|>"}
    for text, token in TINY.special_ids().items():
        plain = llm.tokenize(text.encode(), add_bos=False, special=False)
        assert (plain == [token]) is (text in always), text
        assert llm.detokenize([token]) == (text.encode() if text in always else b"")


def test_harmony_words_are_single_tokens(llm: llama_cpp.Llama) -> None:
    for word in HARMONY_WORDS:
        assert llm.detokenize([_single_token(llm, word)]) == word.encode()
        assert llm.detokenize([_single_token(llm, " " + word)]) == b" " + word.encode()


def test_utf8_round_trip(llm: llama_cpp.Llama) -> None:
    text = "naïve café — 😀🚀 日本語の文章 中文 한국어 Ωμέγα\n\tend  \r\n"
    ids = llm.tokenize(text.encode(), add_bos=False, special=False)
    assert llm.detokenize(ids).decode() == text


def test_end_of_generation_tokens(llm: llama_cpp.Llama) -> None:
    vocab = llama_c.llama_model_get_vocab(llm.model)
    for text, eog in (("<|return|>", True), ("<|call|>", True), ("<|end|>", False)):
        assert llama_c.llama_vocab_is_eog(vocab, _single_token(llm, text)) is eog, text
    assert llama_c.llama_vocab_eos(vocab) == TINY.special_ids()["<|return|>"]


def test_generate(llm: llama_cpp.Llama) -> None:
    prompt = llm.tokenize(HARMONY_PROMPT.encode(), add_bos=False, special=True)
    llm.reset()
    llm.eval(prompt)
    logits = np.ctypeslib.as_array(llama_c.llama_get_logits_ith(llm.ctx, -1), (TINY.vocab_size,))
    assert np.isfinite(logits).all() and logits.std() > 0
    out: list[int] = []
    for token in llm.generate(prompt, temp=0.0, reset=True):
        out.append(token)
        if len(out) == 8:
            break
    assert len(out) == 8 and all(0 <= t < TINY.vocab_size for t in out)


def test_cli(tmp_path: Path) -> None:
    out = tmp_path / "cli.gguf"
    cmd = [sys.executable, "-m", "synthetic", str(out), "--shape", "tiny"]
    subprocess.run(cmd, check=True, capture_output=True, cwd=Path(__file__).parent)
    assert out.read_bytes()[:4] == b"GGUF"


def test_import_is_lazy() -> None:
    code = "import sys, synthetic; print('numpy' in sys.modules, 'gguf' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code],
        check=True,
        capture_output=True,
        text=True,
        cwd=Path(__file__).parent,
    )
    assert result.stdout.split() == ["False", "False"]
