"""How a grammar-held token is drawn without a grammar pass over the whole vocabulary: the token
tree finds exactly the tokens a full pass allows (gpt-oss's real vocabulary), the race draws
from the softmax over the allowed tokens, and a reply held to a format cannot end before its
answer."""

from __future__ import annotations

import ctypes
import json
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from engine_helpers import chat, ran, text_of

from gptoss_local.backends.base import GenerationSettings, ReplyRequest, ResponseFormat
from gptoss_local.backends.llamacpp import native
from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
from gptoss_local.backends.llamacpp.load import LoadSettings
from gptoss_local.backends.llamacpp.options import LlamaOptions
from gptoss_local.backends.llamacpp.structured.harmony import _answer_gbnf
from gptoss_local.backends.llamacpp.structured.race import FIRST_ASKED, TOKEN_DATA, Race, raceable
from gptoss_local.backends.llamacpp.structured.token_trie import TokenTrie
from gptoss_local.events import AnswerDelta, ReasoningDelta
from gptoss_local.schemas import check_answer

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 12},
        "age": {"type": "integer", "minimum": 0, "maximum": 120},
        "tags": {"type": "array", "items": {"enum": ["a", "bb"]}},
    },
    "required": ["name", "age"],
}


def grammar_asker(bindings: Any, grammar: Any) -> Callable[[np.ndarray], np.ndarray]:
    """ids → which of them `grammar` allows now (llama.cpp's own grammar pass over just them)."""

    def allows(ids: np.ndarray) -> np.ndarray:
        probe = np.zeros(len(ids), dtype=TOKEN_DATA)
        probe["id"] = ids
        data = probe.ctypes.data_as(bindings.llama_token_data_p)
        batch = bindings.llama_token_data_array(data, len(ids), -1, False)
        bindings.llama_sampler_apply(grammar, ctypes.byref(batch))
        return np.isfinite(probe["logit"])

    return allows


def test_the_token_tree_allows_exactly_what_a_full_pass_does(o200k: object) -> None:
    bindings = native.lib()
    n = int(bindings.llama_vocab_n_tokens(o200k))
    pieces = native.PieceCache(o200k)
    trie = TokenTrie([b"" if pieces.is_control(t) else pieces(t) for t in range(n)])
    gbnf = _answer_gbnf(json.dumps(PERSON))
    grammar = bindings.llama_sampler_init_grammar(o200k, gbnf.encode(), b"root")
    assert grammar
    allows = grammar_asker(bindings, grammar)
    everything = np.arange(n, dtype=np.int32)
    sizes = []
    try:
        written = native.tokenize(o200k, '{"name": "Ada Lovelace", "age": 36, "tags": ["bb"', False)
        for token in [None, *written]:
            if token is not None:
                bindings.llama_sampler_accept(grammar, token)
            full = allows(everything)
            assert np.array_equal(trie.allowed(allows), full)
            sizes.append(int(full.sum()))
    finally:
        bindings.llama_sampler_free(grammar)
    assert min(sizes) < 100 < max(sizes)  # states between values and inside a string, both


def softmax_draws(race: Race, logits: np.ndarray, allowed: np.ndarray, draws: int) -> Counter:
    """What `race` picks `draws` times from `logits` (a chain of dist only) among `allowed`."""
    bindings = native.lib()
    params = bindings.llama_sampler_chain_default_params()
    chain = bindings.llama_sampler_chain_init(params)
    bindings.llama_sampler_chain_add(chain, bindings.llama_sampler_init_dist(1))
    buffer = np.zeros(logits.size, dtype=TOKEN_DATA)
    picked: Counter = Counter()
    try:
        for _ in range(draws):
            buffer["id"], buffer["logit"] = np.arange(logits.size), logits
            data = buffer.ctypes.data_as(bindings.llama_token_data_p)
            candidates = bindings.llama_token_data_array(data, logits.size, -1, False)
            token = race.draw(
                chain, candidates, buffer["logit"], [],
                lambda ids: allowed[ids], lambda: allowed.copy(), lambda t: True,
            )  # fmt: skip
            picked[token] += 1
    finally:
        bindings.llama_sampler_free(chain)
    return picked


def test_the_race_draws_from_the_softmax_over_the_allowed_tokens() -> None:
    rng = np.random.default_rng(0)
    n = 3000
    logits = rng.normal(0.0, 1.0, n).astype(np.float32)
    logits[:200] += 6.0  # the best by far, and refused: the winner is often past the first asked
    allowed = np.zeros(n, dtype=bool)
    allowed[200::140] = True  # 20 tokens
    draws = 6000
    picked = softmax_draws(Race(native.lib(), n, greedy=False, seed=5), logits, allowed, draws)
    assert set(picked) <= set(np.flatnonzero(allowed))
    weights = np.exp(logits[allowed] - logits[allowed].max())
    expected = weights / weights.sum()
    seen = np.array([picked[t] for t in np.flatnonzero(allowed)]) / draws
    assert 0.5 * np.abs(seen - expected).sum() < 0.06  # total variation, sampling noise ~0.03
    # the first asked tokens rarely hold an allowed one here, so both rounds were drawn from
    best = np.argsort(-logits)[:FIRST_ASKED]
    assert not allowed[best].all()


def test_a_greedy_race_takes_the_best_allowed_token() -> None:
    logits = np.linspace(5.0, 0.0, 500, dtype=np.float32)
    allowed = np.zeros(500, dtype=bool)
    allowed[[450, 300, 499]] = True
    picked = softmax_draws(Race(native.lib(), 500, greedy=True, seed=None), logits, allowed, 3)
    assert picked == Counter({300: 3})


def test_only_chains_that_shift_logits_then_draw_race() -> None:
    assert raceable(["logit_bias", "penalties", "temp", "dist"])
    assert raceable(["until_final", "greedy"])
    assert not raceable(["top_k", "dist"]) and not raceable(["min_p", "temp", "dist"])
    assert not raceable([])


# The steered model may end after its reasoning, and would (its <|return|> pushed up): with a
# format asked it cannot end before its answer, which holds to the schema.
# (llama.cpp's grammars let an end token through where the grammar may end.)
MAY_STOP = ('root ::= <|channel|> "analysis" <|message|> "Thinking." ( <|end|> <|start|> '
            '"assistant" <|channel|> "final" <|message|> .* )?')  # fmt: skip


@pytest.mark.parametrize("held", [False, True])
def test_a_reply_held_to_a_format_does_not_end_before_its_answer(
    backend: LlamaCppBackend, held: bool
) -> None:
    end = backend.tokenize("<|return|>")[0]
    options = LlamaOptions(grammar=MAY_STOP, logit_bias=((end, 30.0),))
    shape = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    fmt = ResponseFormat(shape, "flag") if held else None
    settings = GenerationSettings(seed=3, max_tokens=200)
    reply = ran(backend.stream(ReplyRequest(chat("hello"), settings, fmt), options=options))
    answer = text_of(reply, AnswerDelta)
    assert text_of(reply, ReasoningDelta) == "Thinking."
    if held:
        assert check_answer(answer, fmt)["ok"] in (True, False)  # type: ignore[arg-type]
    else:
        assert answer == "" and reply.stats.stop_reason == "return"  # reasoning, then the end


def test_closing_the_model_stops_the_token_tree_being_built(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tree is built on a thread of its own from the model's vocabulary; a model closed
    while it is being built (a reply held to a format, then quit) must not be read after it is
    freed, which crashed the process. The build reads slowly here, so the close surely comes
    while it runs."""
    import threading
    import time

    from o200k_gguf import add_o200k_tokenizer
    from synthetic import write_gguf
    from synthetic.shapes import TINY_VOCAB

    copy = native.PieceCache.copy

    def slow_copy(self: native.PieceCache) -> Any:
        pieces = copy(self)

        class Slow:
            is_control = staticmethod(pieces.is_control)

            def __call__(self, token: int) -> bytes:
                time.sleep(0.00005)  # 201,088 reads: ten seconds or more
                return pieces(token)

        return Slow()

    monkeypatch.setattr(native.PieceCache, "copy", slow_copy)
    path = write_gguf(tmp_path / "tiny-o200k.gguf", TINY_VOCAB, tokenizer=add_o200k_tokenizer)
    backend = LlamaCppBackend(path, LoadSettings(context=512, gpu_layers=0))
    fmt = ResponseFormat({"type": "object"}, "any")
    reply = backend.stream(ReplyRequest(chat("hi"), GenerationSettings(seed=1), fmt))
    next(reply)  # the chain is built: the tree's build has started
    assert any(t.name == "token-trie" for t in threading.enumerate())
    reply.close()
    backend.close()
    assert not any(t.name == "token-trie" for t in threading.enumerate())
