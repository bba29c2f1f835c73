"""Reasoning and answer token counts on the real engine with the tiny model: every token of
text counts, also where the model wrote no Harmony header (its text is reasoning)."""

from __future__ import annotations

import pytest
from engine_helpers import chat, finished, never_stop, ran, text_of

from gptoss_local.backends.base import GenerationSettings, ReplyRequest
from gptoss_local.backends.llamacpp.options import LlamaOptions
from gptoss_local.events import AnswerDelta, ReasoningDelta

# Text only (a grammar of characters leaves out every control token), so no header.
HEADERLESS = 'root ::= [a-z ]+ ("\\n" [a-z ]+)*'


@pytest.mark.parametrize("limit", [1, 12, 40])
def test_a_reply_cut_off_before_any_header_is_all_reasoning(backend, limit: int) -> None:
    settings = GenerationSettings(max_tokens=limit, seed=5)
    options = LlamaOptions(grammar=HEADERLESS, logit_bias=never_stop(backend))
    events = ran(backend.stream(ReplyRequest(chat("think"), settings), options=options))
    stats = finished(events).stats
    assert stats.stop_reason == "length" and stats.generated_tokens == limit
    assert text_of(events, ReasoningDelta) and not text_of(events, AnswerDelta)
    assert (stats.reasoning_tokens, stats.answer_tokens) == (limit, 0)
