"""Several replies decoded together on llama.cpp sequences (`LoadSettings.sequences`), on the
tiny real model (CPU): each reply keeps its own sampler, events and cache, they overlap in
time, and cancelling, a full context and closing affect only what they should."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from engine_helpers import chat, finished, never_stop, open_tiny, prompt_tokens, ran, text_of

from gptoss_local.backends.base import BackendError, GenerationSettings, ReplyRequest
from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
from gptoss_local.backends.llamacpp.options import LlamaOptions
from gptoss_local.events import AnswerDelta, ReasoningDelta

GREEDY = GenerationSettings(temperature=0, max_tokens=6)


@pytest.fixture(scope="module")
def four(tiny_gguf: Path) -> Iterator[LlamaCppBackend]:
    with open_tiny(tiny_gguf, sequences=4) as backend:
        yield backend


def steered_to(backend: LlamaCppBackend, number: int) -> LlamaOptions:
    """Options that make the model think and answer with `number` in its words."""
    grammar = (
        f'root ::= <|channel|> "analysis" <|message|> "Thinking of {number}" <|end|> '
        f'<|start|> "assistant" <|channel|> "final" <|message|> "Answer {number}"'
    )
    ban = tuple((backend.tokenize(t)[0], float("-inf")) for t in ("<|call|>", "<|endoftext|>"))
    return LlamaOptions(grammar=grammar, logit_bias=ban)


def together(jobs: list) -> list:
    """Run each job (a function) on a thread of its own, all started together."""
    results: list = [None] * len(jobs)
    start = threading.Barrier(len(jobs))

    def run(index: int) -> None:
        start.wait()
        results[index] = jobs[index]()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(jobs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return results


def test_each_reply_keeps_its_own_sampler_and_events(four: LlamaCppBackend) -> None:
    conversations = [chat(f"question number {n}") for n in range(6)]  # more than sequences

    def job(n: int):
        asked = ReplyRequest(conversations[n], GenerationSettings(seed=n))
        return lambda: finished(ran(four.stream(asked, options=steered_to(four, n))))

    replies = together([job(n) for n in range(6)])
    for number, events in enumerate(replies):
        assert text_of(events, ReasoningDelta) == f"Thinking of {number}"
        assert text_of(events, AnswerDelta) == f"Answer {number}"
        assert events.stats.stop_reason == "return"


def test_greedy_replies_together_start_as_each_alone(tiny_gguf: Path) -> None:
    """Decoded beside others, a reply's first tokens are those it has alone. (Later ones may
    part: other sequences' cells change the order attention sums in, and random weights
    magnify that.)"""
    texts = ["tell me about rivers", "how do tides work?", "plan a picnic", "hello friend"]
    with open_tiny(tiny_gguf) as one:
        bias = LlamaOptions(logit_bias=never_stop(one))
        alone = [
            finished(ran(one.stream(ReplyRequest(chat(t), GREEDY), options=bias))) for t in texts
        ]
    with open_tiny(tiny_gguf, sequences=4) as four:
        jobs = [lambda t=t: finished(ran(four.stream(ReplyRequest(chat(t), GREEDY), options=bias)))
                for t in texts]  # fmt: skip
        beside = together(jobs)
    for a, b in zip(alone, beside, strict=True):
        assert a == b and a.stats.generated_tokens == b.stats.generated_tokens == 6


def test_replies_overlap_instead_of_queueing(four: LlamaCppBackend) -> None:
    bias = LlamaOptions(logit_bias=never_stop(four))
    ended: dict[str, float] = {}

    def job(name: str, tokens: int):
        def run():
            settings = GenerationSettings(max_tokens=tokens, seed=1)
            events = finished(ran(four.stream(ReplyRequest(chat(name), settings), options=bias)))
            ended[name] = time.perf_counter()
            return events

        return run

    long, short = together([job("long", 400), job("short", 10)])
    assert long.stats.generated_tokens == 400 and short.stats.generated_tokens == 10
    assert ended["short"] < ended["long"]  # a queue would have finished "long" first


def test_cancelling_one_reply_leaves_the_others_running(four: LlamaCppBackend) -> None:
    bias = LlamaOptions(logit_bias=never_stop(four))
    cancel = threading.Event()

    def cancelled():
        reply = four.stream(
            ReplyRequest(chat("stop me"), GenerationSettings(max_tokens=400)), cancel, bias
        )
        for _event in reply:
            cancel.set()
        return reply.stats

    def kept():
        settings = GenerationSettings(max_tokens=100)
        return finished(
            ran(four.stream(ReplyRequest(chat("keep me"), settings), options=bias))
        ).stats

    stopped, finished_stats = together([cancelled, kept])
    assert stopped.stop_reason == "cancelled" and stopped.generated_tokens < 400
    assert finished_stats.stop_reason == "length" and finished_stats.generated_tokens == 100


def test_a_reply_whose_reader_stops_early_frees_its_sequence(four: LlamaCppBackend) -> None:
    bias = LlamaOptions(logit_bias=never_stop(four))
    for _ in range(6):  # more than the sequences: each abandoned reply must give its slot back
        reply = four.stream(
            ReplyRequest(chat("abandoned"), GenerationSettings(max_tokens=1000)), options=bias
        )
        next(iter(reply))
        reply.close()
    events = finished(ran(four.stream(ReplyRequest(chat("hi"), GenerationSettings(seed=1)),
                                      options=steered_to(four, 7))))  # fmt: skip
    assert text_of(events, AnswerDelta) == "Answer 7"


def test_when_the_shared_context_fills_the_newest_reply_ends(tiny_gguf: Path) -> None:
    with open_tiny(tiny_gguf, sequences=2, context=640) as two:
        bias = LlamaOptions(logit_bias=never_stop(two))
        endless = GenerationSettings(max_tokens=600, seed=2)

        def job(text: str, delay: float):
            def run():
                time.sleep(delay)
                return finished(
                    ran(two.stream(ReplyRequest(chat(text), endless), options=bias))
                ).stats

            return run

        first, second = together([job("the first to come", 0), job("the second", 0.05)])
    # The second ended when the cells ran out; its idle cells then went to the first, which
    # ran to the end of the context.
    assert second.stop_reason == first.stop_reason == "context_full"
    assert second.generated_tokens < first.generated_tokens
    assert first.context_used == 639


def test_idle_sequences_give_their_cells_to_a_new_reply(tiny_gguf: Path) -> None:
    with open_tiny(tiny_gguf, sequences=2, context=640) as two:
        bias = LlamaOptions(logit_bias=never_stop(two))
        long = GenerationSettings(max_tokens=300)
        one, another = (
            ReplyRequest(chat(text), long) for text in ("a long one", "another long one")
        )
        first = finished(ran(two.stream(one, options=bias))).stats
        # The first conversation's cells stay with its sequence, idle; the next needs them.
        second = finished(ran(two.stream(another, options=bias)))
    assert first.generated_tokens == second.stats.generated_tokens == 300


def test_closing_ends_the_replies_in_progress_with_an_error(tiny_gguf: Path) -> None:
    backend = open_tiny(tiny_gguf, sequences=2)
    bias = LlamaOptions(logit_bias=never_stop(backend))
    reply = backend.stream(
        ReplyRequest(chat("forever"), GenerationSettings(max_tokens=100_000)), options=bias
    )
    iterator = iter(reply)
    next(iterator)
    backend.close()
    with pytest.raises(BackendError, match="closed"):
        for _event in iterator:
            pass
    with pytest.raises(BackendError, match="closed"):
        ran(backend.stream(ReplyRequest(chat("after"), GREEDY)))


def test_the_next_turn_reuses_its_sequence_cache(four: LlamaCppBackend) -> None:
    first = chat("a conversation to continue")
    asked = ReplyRequest(first, GenerationSettings(seed=1))
    finished(ran(four.stream(asked, options=steered_to(four, 1))))
    finished(ran(four.stream(ReplyRequest(chat("something else"), GREEDY))))
    second = chat("a conversation to continue", "and then?",
                  reply=(f"Thinking of {1}", f"Answer {1}"))  # fmt: skip
    stats = finished(ran(four.stream(ReplyRequest(second, GREEDY)))).stats
    assert stats.cached_tokens >= len(prompt_tokens(four, first))
