"""Speculative decoding with an EAGLE-3 head on the real tiny model and synthetic heads the
tests' generator writes: the reply is the one written without the head (greedy, and sampled
with a seed), a head whose drafts are always right has them all kept, turn after turn (the
head's cache follows the model's through reused prefixes and prefills), a reply stopped
mid-draft stops clean, and a head made for another model is refused with the reason."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from engine_helpers import chat, open_tiny, ran, recorded, same_while_logits_agree, text_of

from gptoss_local.backends.base import BackendError, GenerationSettings, ReplyRequest, Stats
from gptoss_local.backends.llamacpp import native
from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
from gptoss_local.backends.llamacpp.drafting import (
    FIRST_PAUSE,
    GOVERNOR_WINDOW,
    YIELD_WINDOW,
    DraftGovernor,
)
from gptoss_local.backends.llamacpp.eagle_drafting import MOST_DRAFTS
from gptoss_local.backends.llamacpp.options import LlamaOptions
from gptoss_local.backends.llamacpp.sampling import Sampler
from gptoss_local.events import ReasoningDelta

PLAIN = LlamaOptions()
DRAFTED = LlamaOptions(draft="eagle3")
PROMPT = "the red fox jumps over the lazy dog; " * 12
PIN = 300  # an ordinary token of the tiny vocabulary
GREEDY = GenerationSettings(temperature=0.0, max_tokens=160)


@pytest.fixture(scope="module")
def pinned_head(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A head whose whole draft vocabulary maps to `PIN`: it always drafts that token."""
    from synthetic import TINY
    from synthetic.eagle3 import write_eagle3

    folder = tmp_path_factory.mktemp("heads")
    return write_eagle3(folder / "pinned.gguf", TINY, seed=4, draft_ids=[PIN] * 16)


@pytest.fixture(scope="module")
def headed(tiny_gguf: Path, eagle_gguf: Path) -> Iterator[LlamaCppBackend]:
    with open_tiny(tiny_gguf, draft_model=str(eagle_gguf)) as loaded:
        yield loaded


@pytest.fixture(scope="module")
def pinned(tiny_gguf: Path, pinned_head: Path) -> Iterator[LlamaCppBackend]:
    with open_tiny(tiny_gguf, draft_model=str(pinned_head)) as loaded:
        yield loaded


def _pinned_options(draft: str) -> LlamaOptions:
    return LlamaOptions(draft=draft, logit_bias=((PIN, 30.0),))


def _in_step(backend: LlamaCppBackend) -> bool:
    """The head's cache holds an entry for each position before its newest token, made from the
    tokens the model's cache holds there."""
    head = backend._eagle
    assert head is not None
    memory = native.lib().llama_get_memory(head._context)
    newest = native.lib().llama_memory_seq_pos_max(memory, 0)
    tokens = backend.cache.tokens
    return head._tokens == tokens[: len(head._tokens)] and newest == head._valid - 1


def _all_kept(stats: Stats) -> bool:
    """Many drafts, every one kept but those past the reply's token limit (the last decode's)."""
    return stats.draft_tokens > 20 and stats.accepted_tokens >= stats.draft_tokens - MOST_DRAFTS


@pytest.mark.parametrize(
    "settings",
    [GREEDY, GenerationSettings(seed=7, max_tokens=160),
     GenerationSettings(seed=3, temperature=0.6, top_k=40, max_tokens=160)],
    ids=["greedy", "sampled", "top-k"],
)  # fmt: skip
def test_the_head_changes_nothing_the_model_writes(
    backend: LlamaCppBackend,
    headed: LlamaCppBackend,
    settings: GenerationSettings,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Against the same model loaded without a head: the same tokens for as long as the two
    compute the same logits (a random head's drafts are refused, but each refused draft still
    widens a decode, and rounding may part the replies at a near-tie)."""
    plain = recorded(backend, chat(PROMPT), settings, PLAIN, monkeypatch)
    drafted = recorded(headed, chat(PROMPT), settings, DRAFTED, monkeypatch)
    same_while_logits_agree(plain, drafted, settings.temperature == 0.0)
    assert drafted.stats is not None and drafted.stats.draft_tokens > 0
    assert drafted.stats.accepted_tokens <= drafted.stats.draft_tokens


def test_drafts_that_are_always_right_are_all_kept_turn_after_turn(
    backend: LlamaCppBackend, pinned: LlamaCppBackend
) -> None:
    """The model pinned to one token, the head drafting only it: the drafts are kept, the text
    is the plain reply's, and so on the next turn, whose prompt reuses the cached prefix (the
    head resumes from it) and after a prefill of the turn after."""
    options = _pinned_options("eagle3")
    first = ran(pinned.stream(ReplyRequest(chat(PROMPT), GREEDY), options=options))
    plain = ran(backend.stream(ReplyRequest(chat(PROMPT), GREEDY), options=_pinned_options("")))
    assert text_of(first, ReasoningDelta) == text_of(plain, ReasoningDelta)
    stats = first.stats
    assert _all_kept(stats)
    assert stats.generated_tokens == plain.stats.generated_tokens
    answer = ("fu" * 20, "fu")
    second = chat(PROMPT, "and again", reply=answer)
    assert pinned.prefill(ReplyRequest(second, GREEDY), options=options) > 0
    again = ran(pinned.stream(ReplyRequest(second, GREEDY), options=options))
    assert again.stats.cached_tokens > stats.prompt_tokens - 2  # at most one token evaluated again
    assert _all_kept(again.stats)
    assert _in_step(pinned)
    third = chat(PROMPT, "and again", "once more", reply=answer)
    last = ran(pinned.stream(ReplyRequest(third, GREEDY), options=options))
    assert _all_kept(last.stats) and _in_step(pinned)


def test_a_reply_without_drafts_leaves_the_head_able_to_draft_the_next(
    pinned: LlamaCppBackend,
) -> None:
    """A reply that asks for no drafts decodes without the head; the next prompt has the model
    evaluate again what the head missed, and drafting goes on."""
    ran(pinned.stream(ReplyRequest(chat("first"), GREEDY), options=_pinned_options("")))
    follow = chat("first", "second", reply=("fu" * 10, "fu"))
    after = ran(pinned.stream(ReplyRequest(follow, GREEDY), options=_pinned_options("eagle3")))
    assert _all_kept(after.stats)


def test_a_head_whose_drafts_are_refused_stops_drafting(headed: LlamaCppBackend) -> None:
    settings = GenerationSettings(temperature=0.0, max_tokens=300)
    reply = ran(headed.stream(ReplyRequest(chat(PROMPT), settings), options=DRAFTED))
    stats = reply.stats
    assert stats.generated_tokens == 300
    # Refused drafts shrink each decode's to one, a poor stretch of those ends drafting.
    assert 0 < stats.draft_tokens < 3 * GOVERNOR_WINDOW


def test_a_reply_stopped_mid_draft_ends_cancelled(pinned: LlamaCppBackend) -> None:
    cancel = threading.Event()
    settings = GenerationSettings(temperature=0.0, max_tokens=400)
    reply = pinned.stream(
        ReplyRequest(chat("stop me"), settings), cancel, options=_pinned_options("eagle3")
    )
    for seen, _event in enumerate(reply, start=1):
        if seen == 20:
            cancel.set()
    assert reply.stats is not None and reply.stats.stop_reason == "cancelled"
    assert reply.stats.generated_tokens < 400
    next_one = ran(pinned.stream(ReplyRequest(chat("go on"), GREEDY),
                                 options=_pinned_options("eagle3")))  # fmt: skip
    assert _all_kept(next_one.stats)


def test_a_head_for_another_model_is_refused(tiny_gguf: Path, tmp_path: Path) -> None:
    import dataclasses

    from synthetic import TINY
    from synthetic.eagle3 import write_eagle3

    wider = dataclasses.replace(TINY, name="wider", hidden=128)
    head = write_eagle3(tmp_path / "wider.gguf", wider, seed=1)
    with pytest.raises(BackendError, match="was made for another model") as refused:
        open_tiny(tiny_gguf, draft_model=str(head))
    assert refused.value.kind == "bad_file"
    with pytest.raises(BackendError, match="is not an EAGLE-3 head for this model"):
        open_tiny(tiny_gguf, draft_model=str(tiny_gguf))


def test_the_governor_sizes_drafts_by_what_is_kept() -> None:
    governor = DraftGovernor(most=4, break_even=0.5)
    assert governor.allows() == 2
    governor.record(2, 2)
    governor.record(3, 3)
    assert governor.allows() == 4  # kept whole: one more each time, up to `most`
    governor.record(4, 1)
    assert governor.allows() == 2  # kept one: one more than that next
    governor.record(2, 0)
    assert governor.allows() == 1  # none kept: half
    for _ in range(GOVERNOR_WINDOW):
        governor.record(1, 0)
    assert [governor.allows() for _ in range(FIRST_PAUSE)] == [0] * FIRST_PAUSE
    assert governor.pauses == 1
    assert governor.allows() == 1
    for kept in [1, 0] * (GOVERNOR_WINDOW // 2):  # half kept: at break-even, no pause
        governor.record(1, kept)
    assert governor.allows() == 1


def test_a_reply_whose_drafts_do_not_pay_goes_back_to_sampling_in_the_graph(
    headed: LlamaCppBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With sampling in the graph allowed (a GPU's default), a drafting reply samples on the
    CPU; once a head lapses, the chain moves into the graph for the rest of the reply (here on
    the CPU backend, which samples in its graph too)."""
    entered: list[bool] = []
    enter = Sampler.enter_graph

    def spy(self: Sampler, context: object) -> bool:
        entered.append(enter(self, context))
        return entered[-1]

    monkeypatch.setattr(Sampler, "enter_graph", spy)
    settings = GenerationSettings(temperature=0.0, max_tokens=300)
    options = LlamaOptions(draft="eagle3", backend_sampling=True)
    reply = ran(headed.stream(ReplyRequest(chat(PROMPT), settings), options=options))
    assert entered == [True]
    assert reply.stats.generated_tokens == 300 and 0 < reply.stats.draft_tokens < 100
    again = ran(headed.stream(ReplyRequest(chat(PROMPT), settings), options=options))
    assert again.stats.generated_tokens == 300 and entered == [True, True]
    # Without the graph allowed the chain stays on the CPU: the head only stops drafting.
    ran(headed.stream(ReplyRequest(chat(PROMPT), settings), options=DRAFTED))
    assert entered == [True, True]


def test_drafting_that_saves_too_few_decodes_is_given_up() -> None:
    governor = DraftGovernor(most=6, break_even=0.2)
    for step in range(YIELD_WINDOW):  # one draft kept every 10 decodes, none proposed else
        governor.record(1 if step % 10 == 0 else 0, 1 if step % 10 == 0 else 0)
    assert governor.low_yield and governor.pauses == 0
    paying = DraftGovernor(most=6, break_even=0.2)
    for _ in range(YIELD_WINDOW):
        paying.record(1, 1)
    assert not paying.low_yield
