"""The 240 damaged copies of the tiny model (tests/gguf_mutations.py) never crash llama.cpp:
each is refused by the pre-load check with a one-line reason, or llama.cpp loads it and
replies (or refuses it itself, as an error). Takes ~15 s on two cores, most of it the
installed command run on the 19 files that used to crash it and a sample of 10 others."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from gguf_load_probe import load_each
from gguf_mutations import COUNT, mutants, write_corpus
from installed_cli import gptoss

from gptoss_local.store.gguf_check import GgufError
from gptoss_local.store.gguf_model import check_loadable

# The files that made `gptoss-local run --model-path FILE` abort (SIGABRT, GGML_ASSERT and a
# gdb backtrace) before the check knew what they break.
ABORTED_BEFORE = (
    "001-expert_count=1",
    "005-expert_count=1025",
    "006-expert_count=4294967295",
    "009-expert_used_count=5",
    "010-expert_used_count=100",
    "025-block_count=513",
    "026-block_count=4294967295",
    "036-attention.value_length=0",
    "037-attention.value_length=32",
    "051-attention.layer_norm_rms_epsilon=nan",
    "052-rope.scaling.type=foo",
    "086-duplicate tokens",
    "091-tokenizer model llama",
    "107-attn_norm as F16",
    "108-attn_output.bias as BF16",
    "109-up_exps as I32",
    "110-token_embd as I8",
    "115-alignment 8",
    "116-alignment 1",
)
CRASH_MARKS = ("GGML_ASSERT", "Traceback", "backtrace", "Segmentation fault", "terminate called")


@pytest.fixture(scope="module")
def corpus(tiny_gguf: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_corpus(tiny_gguf, tmp_path_factory.mktemp("mutants"))


def refusal(path: Path) -> str | None:
    """The check's message for `path`, or None when it passes."""
    try:
        check_loadable(path)
    except GgufError as exc:
        return str(exc)
    return None


def test_the_corpus_is_the_same_every_time(tiny_gguf: Path, corpus: dict[str, Path]) -> None:
    raw = tiny_gguf.read_bytes()
    again = mutants(raw)
    assert [m.name for m in again] == list(corpus) and len(corpus) == COUNT
    assert all(m.data == corpus[m.name].read_bytes() and m.data != raw for m in again)
    assert set(ABORTED_BEFORE) <= set(corpus)


def test_every_mutant_is_refused_or_loads_without_a_crash(corpus: dict[str, Path]) -> None:
    reasons = {name: refusal(path) for name, path in corpus.items()}  # < 1 s for all 240
    for name, reason in reasons.items():
        assert reason is None or (reason.startswith(f"{corpus[name]} ") and "\n" not in reason)
    assert all(reasons[name] for name in ABORTED_BEFORE)
    passed = [corpus[name] for name, reason in reasons.items() if reason is None]
    assert 20 < len(passed) < 80  # most damage is refused; harmless edits get through
    # Everything the check lets through goes to llama.cpp, a few files per process.
    outcomes = load_each(passed)
    crashed = {path.name: why for path, why in outcomes.items() if why.startswith("crashed")}
    assert not crashed, crashed
    assert len(outcomes) == len(passed)


def test_the_installed_command_says_what_is_wrong(corpus: dict[str, Path]) -> None:
    others = sorted(set(corpus) - set(ABORTED_BEFORE))
    for name in (*ABORTED_BEFORE, *random.Random(7).sample(others, 10)):
        done = gptoss("run", "--model-path", str(corpus[name]), "--max-tokens", "2", "hi")
        output = done.stdout + done.stderr
        assert done.returncode in (0, 2), (name, done.returncode, output[-3000:])
        assert not any(mark in output for mark in CRASH_MARKS), (name, output[-3000:])
        if name in ABORTED_BEFORE:
            assert done.returncode == 2 and f"error: {corpus[name]} is " in done.stderr, output
