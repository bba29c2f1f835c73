"""A plain chain on the CPU draws in numpy (`quick_draw`) the tokens llama.cpp's own chain
draws, on the tiny real model's logits: greedy exactly, and the full distribution at several
temperatures and seeds, with biases (a ban, a boost, one token biased twice), from the same
random stream (a draw whose number falls within the last-bit differences of the two softmaxes
may land on the neighbouring token, never more than now and then); with bans alone (the
highest token banned too), biases on distinct tokens, and none, each a path of its own; at
every row of a batch; its random stream restarts with the sampler's reset; other chains keep
llama.cpp's draw."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import llama_cpp.llama_cpp as bindings
import pytest
from engine_helpers import chat, open_tiny, prompt_tokens

from gptoss_local.backends.base import BackendError, GenerationSettings
from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
from gptoss_local.backends.llamacpp.options import LlamaOptions
from gptoss_local.backends.llamacpp.sampling import Sampler

DRAWS = 200
# Draws that may differ: numpy's exp (its SIMD path varies with the CPU) and libm's expf differ
# in the last bit, and the sums run in another order, which moves each bound between two tokens
# by ~1e-7 of the total; a draw on the wrong stream differs in nearly every place.
SLIPS = DRAWS // 50


def assert_same_draws(ours: list[int], theirs: list[int]) -> None:
    """`ours` is llama.cpp's draw but for a few neighbouring tokens (bounds a hair apart)."""
    slips = [(a, b) for a, b in zip(ours, theirs, strict=True) if a != b]
    assert len(slips) <= SLIPS, slips


@pytest.fixture(scope="module")
def evaluated(tiny_gguf: Path) -> Iterator[LlamaCppBackend]:
    """The tiny model with a prompt evaluated: its last logits in place."""
    with open_tiny(tiny_gguf) as backend:
        tokens = prompt_tokens(backend, chat("hello there, how are you?"))
        array = (bindings.llama_token * len(tokens))(*tokens)
        batch = bindings.llama_batch_get_one(array, len(tokens))
        assert bindings.llama_decode(backend._native.context, batch) == 0
        yield backend


Biases = tuple[tuple[int, float], ...]
BIAS_KINDS = ["twice", "distinct", "bans", "none"]


def biases(backend: LlamaCppBackend, kind: str = "twice") -> Biases:
    """A ban, a boost and a cut with token 40 biased twice (`np.add.at`'s path); the same on
    distinct tokens; bans alone, the token greedy would pick among them; or none."""
    ended = backend.tokenize("<|return|>")[0]
    if kind == "twice":
        return ((ended, float("-inf")), (40, 3.5), (41, -2.0), (40, 1.25))
    if kind == "distinct":
        return ((ended, float("-inf")), (40, 3.5), (41, -2.0))
    if kind == "bans":
        top = llama_cpp_draws(backend, 0.0, 1, ())[0]
        return ((ended, float("-inf")), (top, float("-inf")))
    return ()


def llama_cpp_draws(
    backend: LlamaCppBackend, temperature: float, seed: int, given: Biases, index: int = -1
) -> list[int]:
    """`DRAWS` tokens from a chain built here, drawn by llama.cpp's `llama_sampler_sample`."""
    params = bindings.llama_sampler_chain_default_params()
    chain = bindings.llama_sampler_chain_init(params)
    n_vocab = bindings.llama_vocab_n_tokens(backend._native.vocab)
    array = (bindings.llama_logit_bias * len(given))(*given)
    stages = [bindings.llama_sampler_init_logit_bias(n_vocab, len(given), array)]
    if temperature <= 0:
        stages.append(bindings.llama_sampler_init_greedy())
    else:
        if temperature != 1.0:
            stages.append(bindings.llama_sampler_init_temp(temperature))
        stages.append(bindings.llama_sampler_init_dist(seed))
    for stage in stages:
        bindings.llama_sampler_chain_add(chain, stage)
    try:
        context = backend._native.context
        return [bindings.llama_sampler_sample(chain, context, index) for _ in range(DRAWS)]
    finally:
        bindings.llama_sampler_free(chain)


@pytest.mark.parametrize("temperature", [0.0, 1.0, 0.7, 2.5])
@pytest.mark.parametrize("seed", [1, 4242])
@pytest.mark.parametrize("kind", BIAS_KINDS)
def test_the_quick_draw_is_llama_cpps_draw(
    evaluated: LlamaCppBackend, temperature: float, seed: int, kind: str
) -> None:
    given = biases(evaluated, kind)
    settings = GenerationSettings(seed=seed, temperature=temperature)
    sampler = Sampler(evaluated._native.vocab, settings, LlamaOptions(logit_bias=given))
    try:
        assert sampler.stages[-1] == "quick draw"
        context = evaluated._native.context
        ours = [sampler.sample(context) for _ in range(DRAWS)]
        if temperature <= 0:
            assert ours == llama_cpp_draws(evaluated, temperature, seed, given)
            banned = {token for token, bias in given if bias == float("-inf")}
            assert ours[0] not in banned
        else:
            assert_same_draws(ours, llama_cpp_draws(evaluated, temperature, seed, given))
        assert temperature <= 0 or len(set(ours)) > 10  # the draws do spread over the vocabulary
        sampler.reset()
        assert [sampler.sample(context) for _ in range(20)] == ours[:20]
    finally:
        sampler.free()


def test_a_seedless_draw_follows_the_chains_seed_also_after_a_reset(
    evaluated: LlamaCppBackend,
) -> None:
    settings = GenerationSettings(seed=None, temperature=1.0)
    sampler = Sampler(evaluated._native.vocab, settings, LlamaOptions(logit_bias=biases(evaluated)))
    context = evaluated._native.context
    try:
        for _ in range(2):
            seed = bindings.llama_sampler_get_seed(sampler._chain)
            ours = [sampler.sample(context) for _ in range(DRAWS)]
            assert_same_draws(ours, llama_cpp_draws(evaluated, 1.0, seed, biases(evaluated)))
            sampler.reset()  # llama.cpp draws a new seed for a chain given none
        assert bindings.llama_sampler_get_seed(sampler._chain) != seed
    finally:
        sampler.free()


def test_other_chains_keep_llama_cpps_draw(evaluated: LlamaCppBackend) -> None:
    vocab, context = evaluated._native.vocab, evaluated._native.context
    for settings, options in [
        (GenerationSettings(seed=1, top_k=40), LlamaOptions()),
        (GenerationSettings(seed=1, presence_penalty=0.5), LlamaOptions()),
        (GenerationSettings(seed=1), LlamaOptions(backend_sampling=True)),  # may join the graph
    ]:
        sampler = Sampler(vocab, settings, options, context)
        try:
            assert "quick draw" not in sampler.stages
            if not sampler.attached:  # an attached chain samples in the next decode
                sampler.sample(context)
        finally:
            sampler.free()


def test_the_quick_draw_reads_every_row_of_a_batch(tiny_gguf: Path) -> None:
    """Rows of a batch with logits at every position lie at other addresses than a one-token
    decode's: each draw reads the row it is asked for."""
    with open_tiny(tiny_gguf) as backend:
        tokens = prompt_tokens(backend, chat("a batch of rows"))[:12]
        batch = bindings.llama_batch_init(len(tokens), 0, 1)
        try:
            batch.n_tokens = len(tokens)
            for position, token in enumerate(tokens):
                batch.token[position], batch.pos[position] = token, position
                batch.n_seq_id[position], batch.seq_id[position][0] = 1, 0
                batch.logits[position] = True
            context = backend._native.context
            assert bindings.llama_decode(context, batch) == 0
            given = biases(backend, "bans")
            settings = GenerationSettings(seed=1, temperature=0.0)
            sampler = Sampler(backend._native.vocab, settings, LlamaOptions(logit_bias=given))
            try:
                ours = [sampler.sample(context, index) for index in range(len(tokens))]
            finally:
                sampler.free()
            theirs = [
                llama_cpp_draws(backend, 0.0, 1, given, index)[0] for index in range(len(tokens))
            ]
            assert ours == theirs and len(set(ours)) > 1, (ours, theirs)
        finally:
            bindings.llama_batch_free(batch)


def test_a_row_llama_cpp_does_not_have_is_a_clear_error(evaluated: LlamaCppBackend) -> None:
    settings = GenerationSettings(seed=1, temperature=0.0)
    sampler = Sampler(evaluated._native.vocab, settings, LlamaOptions())
    try:
        with pytest.raises(BackendError, match="no logits"):
            sampler.sample(evaluated._native.context, 999)  # the prompt had one output row
    finally:
        sampler.free()
