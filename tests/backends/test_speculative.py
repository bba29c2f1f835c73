"""Speculative decoding with n-gram drafts on the real tiny model: the reply is token for token
the one written without drafts (greedy, and sampled with a seed), drafts are kept when the
model would have written them, and a reply stopped mid-draft stops clean."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pytest
from engine_helpers import Recorded, chat, ran, recorded, same_while_logits_agree, text_of

from gptoss_local.backends.base import GenerationSettings, ReplyRequest
from gptoss_local.backends.llamacpp import backend as llama_cpp
from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
from gptoss_local.backends.llamacpp.drafting import NgramDrafter
from gptoss_local.backends.llamacpp.options import LlamaOptions
from gptoss_local.events import AnswerDelta, ReasoningDelta

PLAIN = LlamaOptions()
DRAFTED = LlamaOptions(draft="ngram")
# A prompt that repeats itself, as code under edit or a quoted document does.
REPEATING = "the red fox jumps over the lazy dog; " * 12


def _reply(backend: LlamaCppBackend, settings: GenerationSettings, options: LlamaOptions) -> tuple:
    reply = ran(backend.stream(ReplyRequest(chat(REPEATING), settings), options=options))
    return text_of(reply, ReasoningDelta), text_of(reply, AnswerDelta), reply.stats


def _recorded(
    backend: LlamaCppBackend,
    settings: GenerationSettings,
    options: LlamaOptions,
    monkeypatch: pytest.MonkeyPatch,
) -> Recorded:
    return recorded(backend, chat(REPEATING), settings, options, monkeypatch)


@pytest.mark.parametrize(
    "settings",
    [GenerationSettings(temperature=0.0, max_tokens=200),
     GenerationSettings(seed=7, max_tokens=200),
     GenerationSettings(seed=3, temperature=0.6, top_k=40, max_tokens=200)],
    ids=["greedy", "sampled", "top-k"],
)  # fmt: skip
def test_drafts_change_nothing_the_model_writes(
    backend: LlamaCppBackend, settings: GenerationSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Token for token the plain reply, for as long as the model computes the same logits
    (`same_while_logits_agree`)."""
    plain = _recorded(backend, settings, PLAIN, monkeypatch)
    drafted = _recorded(backend, settings, DRAFTED, monkeypatch)
    assert drafted.stats is not None and plain.stats is not None
    same_while_logits_agree(plain, drafted, settings.temperature == 0.0)
    assert plain.stats.draft_tokens == 0
    assert drafted.stats.accepted_tokens <= drafted.stats.draft_tokens


def test_an_always_right_drafter_has_every_draft_kept(
    backend: LlamaCppBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Drafts that are the plain greedy reply's own tokens are all kept (until rounding parts
    the two replies at a near-tie): each is checked at its own position."""
    settings = GenerationSettings(temperature=0.0, max_tokens=200)
    plain = _recorded(backend, settings, PLAIN, monkeypatch)

    class Oracle(NgramDrafter):
        def reset(self, tokens: Sequence[int]) -> None:
            super().reset(tokens)
            self.start = len(self._tokens)  # the indexed tail of the prompt

        def proposal(self, room: int) -> list[int]:
            done = len(self._tokens) - self.start
            return plain.tokens[done : done + min(room, self.most)]

    monkeypatch.setattr(llama_cpp, "NgramDrafter", Oracle)
    drafted = _recorded(backend, settings, DRAFTED, monkeypatch)
    assert drafted.stats is not None
    parted = next((k for k, (a, b) in enumerate(zip(plain.tokens, drafted.tokens, strict=False))
                   if a != b), len(plain.tokens))  # fmt: skip
    assert drafted.tokens[:parted] == plain.tokens[:parted] and parted > 5
    if parted < len(plain.tokens):
        top = np.sort(plain.logits[parted])[-2:]
        assert top[1] - top[0] < 0.05, "parted where the choice was clear"
    else:
        assert drafted.stats.accepted_tokens >= 0.9 * drafted.stats.draft_tokens


def test_a_looping_greedy_reply_keeps_most_drafts(backend: LlamaCppBackend) -> None:
    # The random model's greedy reply falls into a loop, which n-gram drafts predict; before
    # it does, the governor keeps drafts few, so a good share of those made are kept.
    settings = GenerationSettings(temperature=0.0, max_tokens=300)
    *_, stats = _reply(backend, settings, DRAFTED)
    assert stats.accepted_tokens > stats.generated_tokens // 4
    assert stats.accepted_tokens > stats.draft_tokens // 3


def test_the_next_reply_after_drafts_reuses_a_clean_cache(backend: LlamaCppBackend) -> None:
    """Drafts the model did not keep leave the cache: a reply after a drafted one is the same
    as after a plain one (its prompt's cached prefix is what the sequence holds)."""
    settings = GenerationSettings(temperature=0.0, max_tokens=120)
    _reply(backend, settings, DRAFTED)
    after_drafted = _reply(backend, replace(settings, max_tokens=60), PLAIN)
    _reply(backend, settings, PLAIN)
    after_plain = _reply(backend, replace(settings, max_tokens=60), PLAIN)
    assert after_drafted[:2] == after_plain[:2]
    assert after_drafted[2].cached_tokens == after_plain[2].cached_tokens


def test_a_reply_stopped_mid_draft_ends_cancelled(backend: LlamaCppBackend) -> None:
    cancel = threading.Event()
    reply = backend.stream(
        ReplyRequest(chat(REPEATING), GenerationSettings(temperature=0.0, max_tokens=400)),
        cancel,
        options=DRAFTED,
    )
    for seen, _event in enumerate(reply, start=1):
        if seen == 20:
            cancel.set()
    assert reply.stats is not None and reply.stats.stop_reason == "cancelled"
    assert reply.stats.generated_tokens < 400
    *_, stats = _reply(backend, GenerationSettings(temperature=0.0, max_tokens=30), PLAIN)
    assert stats.generated_tokens > 0  # the engine goes on


def test_the_drafter_proposes_what_followed_the_last_match() -> None:
    drafter = NgramDrafter(most=3)
    drafter.reset([1, 2, 3, 4, 5, 9, 1, 2, 3])
    assert drafter.proposal(room=10) == [4, 5, 9]  # after 1 2 3, last time: 4 5 9
    assert drafter.proposal(room=2) == [4, 5]
    assert drafter.propose(7, room=10) == []  # 2 3 7 and 3 7 were never seen
    drafter.reset([5, 6, 5, 6])
    assert drafter.propose(5, room=5) == [6, 5, 6]  # the newest match, then its loop again
