"""Penalties, logit biases and grammars in the llama.cpp sampler, on the tiny real model: what
they change, that they work with sampling inside the graph, that a structured reply never
reuses or runs beside a chain kept for other settings, and two schemas held at once by the
decoder of parallel replies."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import chat, never_stop, open_tiny, ran, text_of

from gptoss_local.backends.base import (
    GenerationSettings,
    ReplyRequest,
    ResponseFormat,
    UnsupportedRequest,
)
from gptoss_local.backends.llamacpp import sampling
from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
from gptoss_local.backends.llamacpp.options import LlamaOptions
from gptoss_local.backends.llamacpp.structured.gate import (
    Constraint,
    FinalHeaderWatch,
    HeaderTokens,
)
from gptoss_local.events import AnswerDelta
from gptoss_local.schemas import check_answer

STEER = ('root ::= <|channel|> "analysis" <|message|> "Thinking." <|end|> <|start|> '
         '"assistant" <|channel|> "final" <|message|> .*')  # fmt: skip
SMALL = {
    "type": "object",
    "properties": {"n": {"type": "integer", "minimum": 0, "maximum": 9}, "ok": {"type": "boolean"}},
    "required": ["n", "ok"],
    "additionalProperties": False,
}
WORDS = {"type": "array", "items": {"enum": ["alpha", "beta"]}, "minItems": 1, "maxItems": 3}


def tokens_of(backend: LlamaCppBackend, settings: GenerationSettings, **options: Any) -> list:
    """The token ids of a reply to "hello" (the sampler's picks, as the loop decodes them)."""
    picked: list[int] = []
    sample = sampling.Sampler.sample

    def recording(self: sampling.Sampler, *args: Any) -> int:
        picked.append(sample(self, *args))
        return picked[-1]

    backend.cache.clear()
    sampling.Sampler.sample = recording  # type: ignore[method-assign]
    try:
        opts = LlamaOptions(logit_bias=never_stop(backend), **options)
        ran(backend.stream(ReplyRequest(chat("hello"), settings), options=opts))
    finally:
        sampling.Sampler.sample = sample  # type: ignore[method-assign]
    return picked


GREEDY = GenerationSettings(temperature=0, max_tokens=80)


def test_penalties_keep_greedy_sampling_from_repeating_itself(backend: LlamaCppBackend) -> None:
    plain = tokens_of(backend, GREEDY)
    assert len(set(plain)) < len(plain) / 4  # the random model loops on a few tokens
    for penalties in ({"presence_penalty": 2.0}, {"frequency_penalty": 2.0}):
        penalised = tokens_of(backend, replace(GREEDY, **penalties))
        assert len(set(penalised)) >= 0.9 * len(penalised), penalties
        assert penalised[0] == plain[0]  # nothing to penalise before the first token
    negative = tokens_of(backend, replace(GREEDY, presence_penalty=-2.0))
    assert len(set(negative)) <= len(set(plain))  # a negative penalty rewards repeats


def test_penalties_and_biases_sample_the_same_inside_the_graph(backend: LlamaCppBackend) -> None:
    settings = replace(GREEDY, frequency_penalty=1.5, presence_penalty=0.5,
                       logit_bias=((423, -5.0), (209, 3.0)))  # fmt: skip
    on_cpu = tokens_of(backend, settings)
    assert tokens_of(backend, settings, backend_sampling=True) == on_cpu
    kept = backend._samplers._kept
    assert kept is not None and {"penalties", "logit_bias", "on-backend"} <= set(kept[1].stages)


def test_a_logit_bias_moves_the_pick(backend: LlamaCppBackend) -> None:
    plain = tokens_of(backend, GREEDY)
    favoured = 300
    assert tokens_of(backend, replace(GREEDY, logit_bias=((favoured, 100.0),))) == [favoured] * 80
    avoided = tokens_of(backend, replace(GREEDY, logit_bias=((plain[0], -100.0),)))
    assert plain[0] not in avoided
    with pytest.raises(UnsupportedRequest, match="token 100000") as refused:
        backend.stream(ReplyRequest(chat("hi"), replace(GREEDY, logit_bias=((100_000, 1.0),))))
    assert refused.value.field == "logit_bias"


def structured(backend: LlamaCppBackend, schema: Any, seed: int, **options: Any) -> str:
    asked = ReplyRequest(chat("JSON please"), GenerationSettings(seed=seed, max_tokens=300),
                         response_format=ResponseFormat(schema))  # fmt: skip
    events = ran(backend.stream(asked, options=LlamaOptions(grammar=STEER, **options)))
    assert events.stats.stop_reason == "return"  # type: ignore[attr-defined]
    answer = text_of(events, AnswerDelta)
    check_answer(answer, ResponseFormat(schema))
    return answer


def test_a_structured_reply_samples_on_the_cpu_beside_a_kept_graph_chain(
    backend: LlamaCppBackend,
) -> None:
    """A chain attached to the context samples in the graph for its sequence: a reply under a
    grammar must not run beside it (the graph's pick would skip the grammar), nor reuse it."""
    on_graph = {"logit_bias": never_stop(backend), "backend_sampling": True}
    settings = GenerationSettings(seed=5, max_tokens=30)

    def plain() -> str:
        backend.cache.clear()
        opts = LlamaOptions(**on_graph)  # type: ignore[arg-type]
        return "".join(getattr(e, "text", "") for e in backend.stream(
            ReplyRequest(chat("hello"), settings), options=opts))  # fmt: skip

    first = plain()
    assert backend._samplers._kept is not None
    for seed in range(3):
        structured(backend, SMALL, seed, backend_sampling=True)
        assert backend._samplers._kept is None  # let go, not run beside
    assert plain() == first


def test_the_chain_key_holds_the_constraint() -> None:
    settings, options = GenerationSettings(), LlamaOptions()
    tokens = HeaderTokens(1, 2, 3, frozenset({4}))
    one = Constraint('root ::= "a"', True, (), tokens)
    other = Constraint('root ::= "b"', True, (), tokens)
    assert sampling._key(settings, options, one) != sampling._key(settings, options, other)
    assert sampling._key(settings, options, None) != sampling._key(settings, options, one)
    penalised = replace(settings, presence_penalty=1.0)
    assert sampling._key(penalised, options, None) != sampling._key(settings, options, None)


def test_only_the_real_final_header_starts_the_answers_grammar(backend: LlamaCppBackend) -> None:
    ids = {t: backend.tokenize(t)[0] for t in ("<|channel|>", "<|message|>", "<|constrain|>")}
    watch = FinalHeaderWatch(backend._header, backend._pieces)

    def fed(*texts: str) -> list[bool]:
        watch.reset()
        return [watch.feed(t) for text in texts for t in backend.tokenize(text)]

    assert fed("<|channel|>final<|message|>")[-1]
    assert fed("<|channel|>final <|constrain|>json<|message|>")[-1]
    assert fed("<|channel|>analysis<|message|>x<|end|><|start|>assistant<|channel|>final"
               "<|message|>")[-1]  # fmt: skip
    # The same text in ordinary tokens (llama.cpp reads the markers even without special
    # parsing, so the "<" goes in a piece of its own): text, not markers.
    assert not any(fed("<", "|channel|>final", "<", "|message|>"))
    assert not any(fed("<|channel|>commentary to=functions.f <|constrain|>json<|message|>"))
    assert not any(fed("<|channel|>finally<|message|>"))
    assert not any(fed("<|channel|>final<|end|><|message|>"))
    assert ids["<|channel|>"] == backend._header.channel


@pytest.fixture(scope="module")
def two(tiny_gguf: Path) -> Iterator[LlamaCppBackend]:
    with open_tiny(tiny_gguf, sequences=2) as backend:
        yield backend


def test_parallel_replies_each_hold_their_own_schema(two: LlamaCppBackend) -> None:
    answers: dict[tuple[str, int], str] = {}
    start = threading.Barrier(2)

    def job(name: str, schema: Any, seed: int) -> None:
        start.wait()
        answers[(name, seed)] = structured(two, schema, seed)

    for seed in range(3):
        threads = [threading.Thread(target=job, args=("small", SMALL, seed)),
                   threading.Thread(target=job, args=("words", WORDS, seed))]  # fmt: skip
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        assert ("small", seed) in answers and ("words", seed) in answers
    for (name, _seed), answer in answers.items():
        check_answer(answer, ResponseFormat(SMALL if name == "small" else WORDS))


def test_a_structured_reply_beside_one_sampled_in_the_graph(two: LlamaCppBackend) -> None:
    """One sequence samples inside the graph while the other, under a grammar, reads its
    logits back: llama.cpp keeps both in one batch."""
    results: dict[str, Any] = {}
    start = threading.Barrier(2)

    def on_graph() -> None:
        start.wait()
        opts = LlamaOptions(logit_bias=never_stop(two), backend_sampling=True)
        asked = ReplyRequest(chat("hello"), GenerationSettings(seed=3, max_tokens=60))
        results["graph"] = ran(two.stream(asked, options=opts))

    def held() -> None:
        start.wait()
        results["held"] = structured(two, SMALL, 3, backend_sampling=True)

    threads = [threading.Thread(target=on_graph), threading.Thread(target=held)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert results["graph"].stats.generated_tokens == 60
    check_answer(results["held"], ResponseFormat(SMALL))
    assert two._parallel is not None
    kept = [slot.samplers._kept for slot in two._parallel._slots]
    assert any(k is not None and k[1].attached for k in kept)  # the other was in the graph


def test_reasoning_is_sampled_in_the_graph_until_the_grammar_starts(
    backend: LlamaCppBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reply held from its final message on samples in the graph while it reasons, and goes
    on on the CPU, with a copy of its chain, once its grammar starts. (The random model never
    writes a final header: each watch, the sampler's and the reply's, is told one came after
    ten tokens.)"""
    fed: dict[int, int] = {}
    feed = FinalHeaderWatch.feed

    def told(self: FinalHeaderWatch, token: int) -> bool:
        fed[id(self)] = fed.get(id(self), 0) + 1
        return feed(self, token) or fed[id(self)] == 10

    monkeypatch.setattr(FinalHeaderWatch, "feed", told)
    used: list[tuple[sampling.Sampler, int]] = []
    sample = sampling.Sampler.sample

    def recorded(self: sampling.Sampler, *args: Any) -> int:
        used.append((self, sample(self, *args)))
        return used[-1][1]

    monkeypatch.setattr(sampling.Sampler, "sample", recorded)
    opts = LlamaOptions(backend_sampling=True)
    asked = ReplyRequest(chat("JSON please"), GenerationSettings(seed=4, max_tokens=200),
                         response_format=ResponseFormat(SMALL))  # fmt: skip
    events = ran(backend.stream(asked, options=opts))
    assert events.stats.stop_reason == "return"  # type: ignore[attr-defined]
    sampler = used[0][0]
    assert sampler.stages[-2:] == ["on-backend", "left the graph"] and not sampler.attached
    held = b"".join(backend._pieces(t) for _s, t in used[10:]).decode()
    assert held.endswith("<|return|>")
    check_answer(held.removesuffix("<|return|>"), ResponseFormat(SMALL))
    assert backend._samplers._kept is None  # a chain with a grammar is never kept
